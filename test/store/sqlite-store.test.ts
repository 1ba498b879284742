import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Commit, Store } from "../../src/store/store.js";

let dir: string;
let store: Store;
const at = new Date("2026-01-01T00:00:00Z");

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-store-"));
  store = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "FULL", busyTimeoutMs: 1000 });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const base = (writes: Commit["writes"], events: Commit["events"]): Commit => ({ instanceId: "i1", actor: "tester", at, writes, events });
const instance = base(
  [
    { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
    { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
  ],
  [{ aggregateType: "instance", aggregateId: "i1", type: "instance.added", payload: {}, resourceOwner: "i1" }],
);
const user = (id: string, userName: string, orgId = "o1"): Commit["writes"][number] => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId, type: "machine", state: "active", userName, userNameKey: userName.toLowerCase(), machineName: "m", machineDescription: "" },
});
const userAdded = (id: string) => ({ aggregateType: "user" as const, aggregateId: id, type: "user.machine.added", payload: {}, resourceOwner: "o1" });

describe("SQLite store", () => {
  it("opens in WAL mode with foreign keys enforced", async () => {
    const raw = new Database(join(dir, "db.sqlite"), { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
    // foreign_keys is per connection, so it is checked through behaviour: a dangling reference is refused.
    await store.commit(instance);
    await expect(store.commit(base([user("u0", "dangling", "no-such-org")], []))).rejects.toMatchObject({ kind: "failed_precondition" });
  });

  it("appends events with strictly increasing sequences and per-aggregate versions", async () => {
    await store.commit(instance);
    const [a] = await store.commit(base([user("u1", "alice")], [userAdded("u1")]));
    const [b, c] = await store.commit(base([], [userAdded("u1"), userAdded("u1")]));
    expect([a!.sequence, b!.sequence, c!.sequence]).toEqual([2, 3, 4]);
    expect([a!.aggregateVersion, b!.aggregateVersion, c!.aggregateVersion]).toEqual([1, 2, 3]);
    const span = await store.aggregateSpan("user", "u1");
    expect(span?.first.sequence).toBe(2);
    expect(span?.last.sequence).toBe(4);
  });

  it("a commit with a row write of no known kind fails whole: nothing of it is written", async () => {
    await store.commit(instance);
    const before = await store.countEvents({});
    const unknownWrite = { kind: "user.teleport", id: "u1" } as unknown as Commit["writes"][number];
    await expect(store.commit(base([user("u1", "alice"), unknownWrite], [userAdded("u1")]))).rejects.toThrow(/unknown row write "user.teleport"/);
    expect(await store.findUserById("u1")).toBeUndefined();
    expect(await store.countEvents({})).toBe(before);
  });

  it("a span since the newest creation event starts there: an object created again under the same id starts anew", async () => {
    await store.commit(instance);
    await store.commit(base([user("u1", "alice")], [userAdded("u1")]));
    const [, recreated] = await store.commit(base([], [{ ...userAdded("u1"), type: "user.removed" }, userAdded("u1")]));
    await store.commit(base([], [{ ...userAdded("u1"), type: "user.changed" }]));
    const span = await store.aggregateSpan("user", "u1", userAdded("u1").type);
    expect(span?.first.sequence).toBe(recreated!.sequence);
    expect(span?.last.aggregateVersion).toBe(4);
    expect((await store.aggregateSpan("user", "u1"))?.first.aggregateVersion).toBe(1);
    expect(await store.aggregateSpan("user", "u1", "user.never")).toBeUndefined();
  });

  it("maps a unique violation to the rule's DomainError and writes nothing of that commit", async () => {
    await store.commit(instance);
    await store.commit(base([user("u1", "alice")], [userAdded("u1")]));
    const before = await store.countEvents({});
    const failed = store.commit(base([user("u2", "bob"), user("u3", "ALICE".toLowerCase())], [userAdded("u2"), userAdded("u3")]));
    await expect(failed).rejects.toBeInstanceOf(DomainError);
    await expect(failed).rejects.toMatchObject({ kind: "already_exists", reason: "user.already_exists" });
    expect(await store.countEvents({})).toBe(before);
    expect(await store.findUserById("u2")).toBeUndefined();
  });

  it("keeps data across reopen (migrations are idempotent)", async () => {
    await store.commit(instance);
    await store.close();
    store = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "FULL", busyTimeoutMs: 1000 });
    expect((await store.getInstance())?.id).toBe("i1");
  });
});
