import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqlite } from "../../src/store/sqlite/db.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { Commit } from "../../src/store/commit.js";

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

// What only the SQLite engine has; the behaviour every engine shares is in store-contract.test.ts.
describe("SQLite store", () => {
  it("opens in WAL mode with foreign keys enforced", async () => {
    const raw = new Database(join(dir, "db.sqlite"), { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
    // foreign_keys is per connection, so it is checked through behaviour: a dangling reference is refused.
    await store.commit(instance);
    await expect(store.commit(base([user("u0", "dangling", "no-such-org")], []))).rejects.toMatchObject({ kind: "failed_precondition" });
  });

  it("keeps its temporary files in memory (a batched command's savepoint journal), after its migrations", () => {
    // temp_store is per connection: the connection openSqlite makes for the store is the one asked.
    const { sqlite } = openSqlite({ path: join(dir, "db.sqlite"), synchronous: "FULL", busyTimeoutMs: 1000 });
    try {
      expect(sqlite.pragma("temp_store", { simple: true })).toBe(2);
    } finally {
      sqlite.close();
    }
  });
});
