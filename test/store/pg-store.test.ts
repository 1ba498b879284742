import { readFileSync } from "node:fs";
import { type AddressInfo, createServer, type Socket } from "node:net";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { toDomainError } from "../../src/store/postgres/pg-errors.js";
import { createPostgresStore } from "../../src/store/postgres/pg-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../support/postgres.js";
import { testCluster } from "../support/postgres-cluster.js";
import { commitOf } from "./fixtures.js";

// What only the PostgreSQL engine has (src/store/postgres): migrations applied once under an advisory lock, however
// many replicas start together; a database a newer Gatehouse migrated is refused; the server's errors map to the same
// DomainErrors as SQLite's (a lock conflict or a deadlock is unavailable `store.busy`, retried), and an unexpected one
// is passed on as the server raised it — never drizzle's wrapper, whose message carries the query's parameters.

const journal = JSON.parse(readFileSync(new URL("../../src/store/postgres/migrations/meta/_journal.json", import.meta.url), "utf8")) as { entries: { when: number }[] };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function database() {
  const created = await createTestDatabase(testCluster());
  cleanups.push(created.drop);
  return created;
}

async function client(url: string) {
  const connection = new pg.Client({ connectionString: url });
  await connection.connect();
  cleanups.push(() => connection.end());
  return connection;
}

async function open(url: string): Promise<Store> {
  const store = await createPostgresStore({ url, poolSize: 2 });
  cleanups.push(() => store.close());
  return store;
}

/** What `work` rejects with. */
async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

describe("migrations", () => {
  it("three replicas starting together on an empty database: all open, every migration applied once", async () => {
    const { url } = await database();
    const stores = await Promise.all([open(url), open(url), open(url)]);
    const raw = await client(url);
    expect((await raw.query("SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations")).rows[0].n).toBe(journal.entries.length);
    expect((await raw.query("SELECT id, last_sequence, access_version FROM commit_counters")).rows).toEqual([{ id: 1, last_sequence: "0", access_version: "0" }]);
    await stores[0]!.commit({ ...commitOf([]), events: [{ aggregateType: "instance", aggregateId: "i1", type: "instance.added", payload: {}, resourceOwner: "i1" }] });
    expect((await stores[2]!.listEvents({ limit: 10 })).map((event) => event.sequence)).toEqual([1]);
  });

  it("a database a newer Gatehouse migrated is refused (GATEHOUSE_SCHEMA_NEWER), its data untouched", async () => {
    const { url } = await database();
    await (await open(url)).setMasterKeyProbe("v1.kept");
    const raw = await client(url);
    const newest = Math.max(...journal.entries.map((entry) => entry.when));
    await raw.query("INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-a-newer-version', $1)", [newest + 1]);
    const error = await rejection(createPostgresStore({ url }));
    expect(error).toMatchObject({ code: "GATEHOUSE_SCHEMA_NEWER", message: expect.stringMatching(/newer than this version's newest/) });
    expect((await raw.query("SELECT sealed FROM master_key_probe")).rows).toEqual([{ sealed: "v1.kept" }]);
    // The newest migration this version knows is not "newer".
    await raw.query("DELETE FROM drizzle.__drizzle_migrations WHERE hash = 'from-a-newer-version'");
    expect(await (await open(url)).getMasterKeyProbe()).toBe("v1.kept");
  });
});

describe("the server's errors", () => {
  it("a second event of one aggregate at the same version is aborted store.concurrent_write", async () => {
    const { url } = await database();
    await open(url);
    const raw = await client(url);
    const insert = "INSERT INTO events (sequence, instance_id, aggregate_type, aggregate_id, aggregate_version, type, payload, actor, resource_owner, created_at) VALUES ($1, 'i1', 'user', 'u1', 1, 'user.added', '{}', 'a', 'o1', 0)";
    await raw.query(insert, [1]);
    const mapped = toDomainError(await rejection(raw.query(insert, [2])));
    expect(mapped).toBeInstanceOf(DomainError);
    expect(mapped).toMatchObject({ kind: "aborted", reason: "store.concurrent_write", message: expect.stringMatching(/concurrently.*retry/) });
  });

  it("a unique violation of a key that guards no rule is passed on as the server raised it, without the query's parameters", async () => {
    const { url } = await database();
    const store = await open(url);
    const org = { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" as const };
    await store.commit(commitOf([{ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, { kind: "organization.insert", row: org }]));
    const error = await rejection(store.commit(commitOf([{ kind: "organization.insert", row: { ...org, name: "secret-looking-name", nameKey: "secret-looking-name" } }])));
    expect(error).toBeInstanceOf(pg.DatabaseError);
    expect(error).toMatchObject({ code: "23505", constraint: "organizations_pkey" });
    expect(String((error as Error).message)).not.toMatch(/secret-looking-name/);
  });

  it("a row another transaction holds, past the lock timeout, is unavailable store.busy", async () => {
    const { url } = await database();
    await open(url);
    const holder = await client(url);
    const waiter = await client(url);
    await holder.query("BEGIN");
    await holder.query("UPDATE commit_counters SET access_version = access_version WHERE id = 1");
    await waiter.query("SET lock_timeout = '20ms'");
    const error = await rejection(waiter.query("UPDATE commit_counters SET access_version = access_version WHERE id = 1"));
    await holder.query("ROLLBACK");
    expect(error).toMatchObject({ code: "55P03" });
    expect(toDomainError(error)).toMatchObject({ kind: "unavailable", reason: "store.busy", message: expect.stringMatching(/busy.*retry/) });
  });

  it("a deadlock is unavailable store.busy, and so is a serialization failure", async () => {
    const { url } = await database();
    await open(url);
    const a = await client(url);
    const b = await client(url);
    // Two rows of a table of its own (the schema's instances table holds one row only).
    await a.query("CREATE TABLE deadlock_rows (id text PRIMARY KEY, name text NOT NULL)");
    await a.query("INSERT INTO deadlock_rows (id, name) VALUES ('x', 'X'), ('y', 'Y')");
    for (const session of [a, b]) await session.query("SET deadlock_timeout = '20ms'");
    await a.query("BEGIN");
    await b.query("BEGIN");
    await a.query("UPDATE deadlock_rows SET name = 'A' WHERE id = 'x'");
    await b.query("UPDATE deadlock_rows SET name = 'B' WHERE id = 'y'");
    const first = a.query("UPDATE deadlock_rows SET name = 'A' WHERE id = 'y'").then(
      () => undefined,
      (error: unknown) => error,
    );
    const second = b.query("UPDATE deadlock_rows SET name = 'B' WHERE id = 'x'").then(
      () => undefined,
      (error: unknown) => error,
    );
    const deadlock = (await Promise.all([first, second])).find((error) => error !== undefined);
    await a.query("ROLLBACK");
    await b.query("ROLLBACK");
    expect(deadlock).toMatchObject({ code: "40P01" });
    expect(toDomainError(deadlock)).toMatchObject({ kind: "unavailable", reason: "store.busy" });

    await a.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
    await a.query("SELECT name FROM deadlock_rows WHERE id = 'x'");
    await b.query("UPDATE deadlock_rows SET name = 'changed' WHERE id = 'x'");
    const serialization = await rejection(a.query("UPDATE deadlock_rows SET name = 'A' WHERE id = 'x'"));
    await a.query("ROLLBACK");
    expect(serialization).toMatchObject({ code: "40001" });
    expect(toDomainError(serialization)).toMatchObject({ kind: "unavailable", reason: "store.busy" });
  });

  it("what is no server error passes through unchanged: a DomainError, an Error, null, a string", () => {
    const domain = new DomainError("aborted", "store.condition_failed", "gone");
    const plain = Object.assign(new Error("x"), { code: "23505" });
    expect(toDomainError(domain)).toBe(domain);
    expect(toDomainError(plain)).toBe(plain);
    expect(toDomainError(null)).toBeNull();
    expect(toDomainError("23505")).toBe("23505");
  });
});

describe("the store's life", () => {
  it("reads answer while the process's commits wait for the commit lock another replica holds", { timeout: 15_000 }, async () => {
    const { url } = await database();
    const store = await open(url);
    const holder = await client(url);
    // Another replica's commit in progress: it holds the commit lock.
    await holder.query("BEGIN");
    await holder.query("UPDATE commit_counters SET last_sequence = last_sequence WHERE id = 1");
    const commits = Array.from({ length: 6 }, () => store.commit({ ...commitOf([]), events: [{ aggregateType: "instance", aggregateId: "i1", type: "instance.changed", payload: {}, resourceOwner: "i1" }] }));
    // More commits than the store has connections: had they taken them all, these reads would wait for the lock too.
    expect(await store.getMasterKeyProbe()).toBeUndefined();
    expect(await store.accessVersion()).toBe("0");
    expect(await store.countEvents({})).toBe(0);
    await holder.query("ROLLBACK");
    expect((await Promise.all(commits)).map(([event]) => event!.sequence).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
  });


  it("a commit waits its turn for as long as the commits ahead take: waiting is no connection timeout", async () => {
    const { url } = await database();
    const store = await createPostgresStore({ url, commitPoolSize: 1, connectTimeoutMs: 100 });
    cleanups.push(() => store.close());
    const holder = await client(url);
    await holder.query("BEGIN");
    await holder.query("UPDATE commit_counters SET last_sequence = last_sequence WHERE id = 1");
    const event = { aggregateType: "instance" as const, aggregateId: "i1", type: "instance.changed", payload: {}, resourceOwner: "i1" };
    // One commit holds the store's only commit connection, waiting for the lock; the others wait for that connection.
    const commits = Array.from({ length: 3 }, () => store.commit({ ...commitOf([]), events: [event] }));
    // A slow commit of another replica: it holds the lock well past the connect timeout, then ends.
    await holder.query("SELECT pg_sleep(0.5)");
    await holder.query("ROLLBACK");
    expect((await Promise.all(commits)).map(([stored]) => stored!.sequence).sort((a, b) => a - b)).toEqual([1, 2, 3]);
  });

  it("a server that accepts the connection but never answers fails the open after the connect timeout", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket.on("error", () => {})));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const { port } = silent.address() as AddressInfo;
    const error = await rejection(createPostgresStore({ url: `postgres://postgres@127.0.0.1:${port}/none`, connectTimeoutMs: 200 }));
    expect(String((error as Error).message)).toMatch(/timeout/i);
  });

  it("durable() resolves at once (PostgreSQL acknowledged every commit durable); close() may run twice", async () => {
    const { url } = await database();
    const store = await createPostgresStore({ url });
    await store.setMasterKeyProbe("v1.p");
    await expect(store.durable()).resolves.toBeUndefined();
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
  });
});
