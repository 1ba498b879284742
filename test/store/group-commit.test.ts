import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { createSqliteStore } from "../../src/store/sqlite-store.js";
import type { Commit, Store } from "../../src/store/store.js";

// Group commit (issue 12): commits requested together share one transaction and one durable sync, and still
// behave as if each had its own: a failing commit rolls back alone with its own error, what it wrote is never seen
// by the others, and no commit is acknowledged before its transaction is durable.

let dir: string;
let store: Store;
let batches: number[];
const at = new Date("2026-01-01T00:00:00Z");
const path = () => join(dir, "db.sqlite");

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-group-commit-"));
  batches = [];
  store = createSqliteStore({ path: path(), synchronous: "FULL", busyTimeoutMs: 1000, onCommitBatch: (size) => batches.push(size) });
  await store.commit(base([{ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, organization("o1")], []));
  batches = [];
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const base = (writes: Commit["writes"], events: Commit["events"]): Commit => ({ instanceId: "i1", actor: "tester", at, writes, events });
const organization = (id: string): Commit["writes"][number] => ({ kind: "organization.insert", row: { id, instanceId: "i1", name: id, nameKey: id, state: "active" } });
const user = (id: string, userName: string): Commit["writes"][number] => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName, userNameKey: userName.toLowerCase(), machineName: "m", machineDescription: "" },
});
const userAdded = (id: string) => ({ aggregateType: "user" as const, aggregateId: id, type: "user.machine.added", payload: {}, resourceOwner: "o1" });
const addUser = (id: string, userName = id) => base([user(id, userName)], [userAdded(id)]);

describe("group commit", () => {
  it("applies commits requested together in one transaction, each with its own events", async () => {
    const results = await Promise.all(["u1", "u2", "u3", "u4"].map((id) => store.commit(addUser(id))));
    expect(batches).toEqual([4]);
    const sequences = results.map((events) => events[0]!.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(4);
    expect(results.map((events) => events[0]!.aggregateId)).toEqual(["u1", "u2", "u3", "u4"]);
  });

  it("applies a commit requested alone at once, in a transaction of its own", async () => {
    await store.commit(addUser("alone"));
    await store.commit(addUser("next"));
    expect(batches).toEqual([1, 1]);
  });

  it("rolls back a failing commit alone: it gets its own error, the others of its batch are kept", async () => {
    const outcomes = await Promise.allSettled([store.commit(addUser("a1", "same")), store.commit(addUser("a2", "same")), store.commit(addUser("a3", "other"))]);
    expect(batches).toEqual([3]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const error = (outcomes[1] as PromiseRejectedResult).reason as DomainError;
    expect(error).toBeInstanceOf(DomainError);
    expect(error.kind).toBe("already_exists");
    expect(await store.findUserById("a1")).toBeDefined();
    expect(await store.findUserById("a2")).toBeUndefined();
    expect(await store.findUserById("a3")).toBeDefined();
    // The failed commit's event is gone with it: the user's aggregate has none.
    expect(await store.listEvents({ aggregateId: "a2", limit: 10 })).toEqual([]);
  });

  it("never shows a commit what a failed commit of the same batch wrote", async () => {
    // The first commit adds an organization, then fails (a duplicate user name): the organization goes with it.
    await store.commit(addUser("taken", "taken"));
    const failing = base([organization("o2"), user("x1", "taken")], [userAdded("x1")]);
    // The second, in the same batch, changes that organization's state: it must find none.
    const dependent = base([{ kind: "organization.setState", id: "o2", state: "inactive" }], []);
    const outcomes = await Promise.allSettled([store.commit(failing), store.commit(dependent)]);
    expect(batches.at(-1)).toBe(2);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(((outcomes[1] as PromiseRejectedResult).reason as DomainError).reason).toBe("store.condition_failed");
    expect(await store.findOrganizationById("o2")).toBeUndefined();
  });

  it("acknowledges a commit only once its transaction is committed: another connection sees it then", async () => {
    const reader = new Database(path(), { readonly: true });
    try {
      const seen = await Promise.all(
        ["v1", "v2", "v3"].map((id) => store.commit(addUser(id)).then(() => reader.prepare("SELECT id FROM users WHERE id = ?").get(id) !== undefined)),
      );
      expect(seen).toEqual([true, true, true]);
    } finally {
      reader.close();
    }
  });

  it("splits a burst into transactions of at most 256 commits", async () => {
    await Promise.all(Array.from({ length: 300 }, (_, i) => store.commit(addUser(`b${i}`))));
    expect(batches).toEqual([256, 44]);
    expect(await store.countUsers({ orgId: "o1" })).toBe(300);
  });
});
