import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCommitBatches } from "../../src/store/sqlite/commit-batches.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { Commit } from "../../src/store/commit.js";

// Group commit, the transaction half (issue 12): the commands' commits of one turn of the event loop are applied in
// one SQLite transaction, each in its own savepoint, and acknowledged only once that transaction is committed (and,
// with synchronous FULL, synced: group-commit.test.ts). A batch SQLite loses takes every member with it, and none of
// them is acknowledged.

let dir: string;
const opened: { close(): unknown }[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-commit-batches-"));
});
afterEach(async () => {
  for (const handle of opened.splice(0).reverse()) await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

const turnEnd = () => new Promise((resolve) => setImmediate(resolve));

describe("the store's commits", () => {
  const at = new Date("2026-01-01T00:00:00Z");
  const base = (writes: Commit["writes"], events: Commit["events"]): Commit => ({ instanceId: "i1", actor: "tester", at, writes, events });
  const setUp = base(
    [
      { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
      { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "o1", nameKey: "o1", state: "active" } },
    ],
    [],
  );
  const addUser = (id: string, userName = id) =>
    base(
      [{ kind: "user.insert", row: { id, instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName, userNameKey: userName, machineName: "m", machineDescription: "" } }],
      [{ aggregateType: "user", aggregateId: id, type: "user.machine.added", payload: {}, resourceOwner: "o1" }],
    );
  const openStore = (onBatchLost?: (error: unknown) => void): Store => {
    const store = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "FULL", busyTimeoutMs: 1000, onBatchLost });
    opened.push(store);
    return store;
  };
  const reader = () => {
    const other = new Database(join(dir, "db.sqlite"), { readonly: true });
    opened.push(other);
    return { users: () => other.prepare("SELECT id FROM users ORDER BY id").pluck().all() };
  };

  it("of one turn are one transaction, which another connection sees whole when the turn ends", async () => {
    const store = openStore();
    await store.commit(setUp);
    const other = reader();
    const writes = ["u1", "u2", "u3"].map((id) => store.commit(addUser(id)));
    // Each applied (the store's own reads would see it), none committed on its own.
    expect(other.users()).toEqual([]);
    await Promise.all(writes);
    expect(other.users()).toEqual(["u1", "u2", "u3"]);
  });

  it("that fail roll back alone, to their savepoint: the batch's other commits, before and after, are kept", async () => {
    const store = openStore();
    await store.commit(setUp);
    const outcomes = await Promise.allSettled([store.commit(addUser("a1", "same")), store.commit(addUser("a2", "same")), store.commit(addUser("a3"))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(reader().users()).toEqual(["a1", "a3"]);
    expect(await store.listEvents({ aggregateId: "a2", limit: 10 })).toEqual([]);
  });

  it("of an open batch hold the durability barrier (every answer's) until the batch is committed", async () => {
    const store = openStore();
    await store.commit(setUp);
    await store.durable();
    const write = store.commit(addUser("u1"));
    // Its row can be read now, so any answer (which waits for the barrier) must wait for the batch.
    let barrierPassed = false;
    const barrier = store.durable().then(() => (barrierPassed = true));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(barrierPassed).toBe(false);
    await barrier;
    expect(reader().users()).toEqual(["u1"]);
    await write;
  });

  it("that fail in a savepoint after writing take their own writes back, and only those", async () => {
    const store = openStore();
    await store.commit(setUp);
    await store.commit(addUser("a0", "taken"));
    const twoUsers = base(
      [
        { kind: "user.insert", row: { id: "b1", instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName: "fresh", userNameKey: "fresh", machineName: "m", machineDescription: "" } },
        { kind: "user.insert", row: { id: "b2", instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName: "taken", userNameKey: "taken", machineName: "m", machineDescription: "" } },
      ],
      [],
    );
    const outcomes = await Promise.allSettled([store.commit(addUser("a1")), store.commit(twoUsers), store.commit(addUser("a3"))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(reader().users()).toEqual(["a0", "a1", "a3"]);
  });

  it("whose batch's first commit fails: that one alone fails, the next opens the batch", async () => {
    const store = openStore();
    await store.commit(setUp);
    await store.commit(addUser("a1", "taken"));
    const outcomes = await Promise.allSettled([store.commit(addUser("a2", "taken")), store.commit(addUser("a3"))]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "fulfilled"]);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ kind: "already_exists" });
    expect(reader().users()).toEqual(["a1", "a3"]);
  });

  it("of a batch SQLite loses all fail as unavailable, and so does every later write and answer: the process must stop", async () => {
    const told: unknown[] = [];
    const store = openStore((error) => told.push(error));
    await store.commit(setUp);
    // A statement that makes SQLite roll the whole transaction back, as a full or failing disk may.
    const fault = new Database(join(dir, "db.sqlite"));
    fault.exec("CREATE TRIGGER fault BEFORE INSERT ON events WHEN new.aggregate_id = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'injected: the batch is lost'); END");
    fault.close();
    const batchLost = { kind: "unavailable", reason: "store.batch_lost" };
    const earlier = store.commit(addUser("a1"));
    // A call that read the batch's row before the loss: its answer must not go out.
    expect((await store.findUserById("a1"))?.userName).toBe("a1");
    await expect(store.commit(addUser("boom"))).rejects.toMatchObject(batchLost);
    await expect(earlier).rejects.toMatchObject(batchLost);
    await expect(store.durable()).rejects.toMatchObject(batchLost);
    await expect(store.commit(addUser("a3"))).rejects.toMatchObject(batchLost);
    expect(told).toHaveLength(1);
    expect(reader().users()).toEqual([]);
  });

  it("made once the store is closing are refused as unavailable", async () => {
    const store = openStore();
    await store.commit(setUp);
    const closed = store.close();
    await expect(store.commit(addUser("late"))).rejects.toMatchObject({ kind: "unavailable", reason: "store.closing" });
    await closed;
    expect(reader().users()).toEqual([]);
  });

  it("see another process's commits in a batch as the principal cache's access version does", async () => {
    const store = openStore();
    await store.commit(setUp);
    const before = await store.accessVersion();
    await turnEnd();
    const other = new Database(join(dir, "db.sqlite"));
    other.prepare("UPDATE organizations SET name = 'renamed' WHERE id = 'o1'").run();
    other.close();
    // In one turn: a commit opens a batch (which sees the other commit), then a call checks its principal.
    const write = store.commit(addUser("u1"));
    expect(await store.accessVersion()).not.toBe(before);
    await write;
  });

  it("still open when the store closes are committed and acknowledged first", async () => {
    const store = openStore();
    await store.commit(setUp);
    const write = store.commit(addUser("u1"));
    await store.close();
    await expect(write).resolves.toHaveLength(1);
    expect(reader().users()).toEqual(["u1"]);
  });
});

describe("a batch", () => {
  const connect = (options: { openedFailsOnce?: boolean } = {}) => {
    let openedFails = options.openedFailsOnce ?? false;
    const sqlite = new Database(join(dir, "batches.sqlite"));
    opened.push(sqlite);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.exec(`CREATE TABLE parent (id TEXT PRIMARY KEY);
      CREATE TABLE child (id TEXT PRIMARY KEY, parent TEXT REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)`);
    const heard: string[] = [];
    const lostAs = new Error("the batch was lost");
    const batches = createCommitBatches(sqlite, {
      opened: () => {
        heard.push("opened");
        if (openedFails) {
          openedFails = false;
          throw new Error("data_version unreadable");
        }
      },
      committed: (commits) => heard.push(`committed ${commits}`),
      lost: (error) => {
        heard.push(`lost: ${(error as Error).message}`);
        return lostAs;
      },
    });
    // Two rows per commit, so that a commit rolled back to its savepoint shows whether it took its first row along.
    const insert = (table: string, id: string, parent?: string) => () => {
      const row = parent === undefined ? `INSERT INTO ${table} (id) VALUES (?)` : `INSERT INTO ${table} (id, parent) VALUES (?, '${parent}')`;
      sqlite.prepare(row).run(`${id}a`);
      sqlite.prepare(row).run(id);
    };
    const rows = (table: string) => sqlite.prepare(`SELECT id FROM ${table} ORDER BY id`).pluck().all();
    return { sqlite, batches, heard, lostAs, insert, rows };
  };

  it("opens with its turn's first commit and commits when the turn ends, counting its commits (not the failed ones)", async () => {
    const { sqlite, batches, heard, insert, rows } = connect();
    const first = batches.apply(insert("parent", "p1"));
    expect(heard).toEqual(["opened"]);
    expect(sqlite.inTransaction).toBe(true);
    // The second commit fails on its second row: its first row goes with it (its savepoint), the first commit stays.
    expect(() =>
      batches.apply(() => {
        insert("parent", "p9")();
        insert("parent", "p1")();
      }),
    ).toThrow(/UNIQUE/);
    expect(sqlite.inTransaction).toBe(true);
    const third = batches.apply(insert("parent", "p2"));
    expect(third.committed).toBe(first.committed);
    await first.committed;
    expect(heard).toEqual(["opened", "committed 2"]);
    expect(rows("parent")).toEqual(["p1", "p1a", "p2", "p2a"]);
    batches.apply(insert("parent", "p3"));
    expect(heard).toEqual(["opened", "committed 2", "opened"]);
  });

  it("whose first commit fails does not stay open: that commit rolls back whole, and the next one opens a batch", async () => {
    const { sqlite, batches, heard, insert, rows } = connect();
    await batches.apply(insert("parent", "p1")).committed;
    expect(() => batches.apply(insert("parent", "p1"))).toThrow(/UNIQUE/);
    expect(sqlite.inTransaction).toBe(false);
    expect(batches.committed()).toBeUndefined();
    await batches.apply(insert("parent", "p2")).committed;
    expect(heard).toEqual(["opened", "committed 1", "opened", "opened", "committed 1"]);
    expect(rows("parent")).toEqual(["p1", "p1a", "p2", "p2a"]);
  });

  it("whose opening fails leaves no transaction behind: the next commit opens a batch", async () => {
    const { sqlite, batches, heard, insert, rows } = connect({ openedFailsOnce: true });
    expect(() => batches.apply(insert("parent", "p1"))).toThrow("data_version unreadable");
    expect(sqlite.inTransaction).toBe(false);
    expect(batches.committed()).toBeUndefined();
    await batches.apply(insert("parent", "p2")).committed;
    expect(heard).toEqual(["opened", "opened", "committed 1"]);
    expect(rows("parent")).toEqual(["p2", "p2a"]);
  });

  it("whose COMMIT fails is lost whole: every member fails with what the store makes of it, none of its rows is kept, and the next turn starts a new one", async () => {
    const { sqlite, batches, heard, lostAs, insert, rows } = connect();
    const kept = batches.apply(insert("parent", "p1"));
    // A dangling reference under a deferred foreign key: each statement succeeds, the COMMIT is refused.
    const dangling = batches.apply(insert("child", "c1", "nobody"));
    await expect(kept.committed).rejects.toBe(lostAs);
    await expect(dangling.committed).rejects.toBe(lostAs);
    expect(heard).toEqual(["opened", "lost: FOREIGN KEY constraint failed"]);
    expect(sqlite.inTransaction).toBe(false);
    expect(rows("parent")).toEqual([]);
    await batches.apply(insert("parent", "p2")).committed;
    expect(rows("parent")).toEqual(["p2", "p2a"]);
  });

  it("that SQLite rolls back whole inside a commit (as an I/O error or a full disk may) is lost at once: its earlier members fail, later ones go to a new batch", async () => {
    const { sqlite, batches, heard, lostAs, insert, rows } = connect();
    const earlier = batches.apply(insert("parent", "p1"));
    const failure = new Error("disk I/O error");
    expect(() =>
      batches.apply(() => {
        sqlite.exec("ROLLBACK");
        throw failure;
      }),
    ).toThrow(failure);
    await expect(earlier.committed).rejects.toBe(lostAs);
    expect(heard).toEqual(["opened", "lost: disk I/O error"]);
    const later = batches.apply(insert("parent", "p2"));
    expect(heard).toEqual(["opened", "lost: disk I/O error", "opened"]);
    await later.committed;
    expect(rows("parent")).toEqual(["p2", "p2a"]);
  });

  it("ended early is not ended again by its turn, and has no `committed` when none is open", async () => {
    const { batches, heard, insert, rows } = connect();
    expect(batches.committed()).toBeUndefined();
    const early = batches.apply(insert("parent", "p1"));
    expect(batches.committed()).toBe(early.committed);
    batches.end();
    await early.committed;
    batches.end();
    // A batch opened after it, in the same turn, commits at the end of the turn.
    const next = batches.apply(insert("parent", "p2"));
    await turnEnd();
    await next.committed;
    expect(heard).toEqual(["opened", "committed 1", "opened", "committed 1"]);
    expect(rows("parent")).toEqual(["p1", "p1a", "p2", "p2a"]);
  });

  it("that opens commits the other connections' open batches first (one thread cannot wait for its own lock)", async () => {
    const one = connect();
    const other = new Database(join(dir, "batches.sqlite"));
    opened.push(other);
    const otherBatches = createCommitBatches(other, { opened: () => {}, committed: () => {}, lost: (error) => error });
    const mine = one.batches.apply(one.insert("parent", "p1"));
    const theirs = otherBatches.apply(() => other.prepare("INSERT INTO parent (id) VALUES ('q1')").run());
    await mine.committed;
    await theirs.committed;
    expect(one.rows("parent")).toEqual(["p1", "p1a", "q1"]);
  });
});
