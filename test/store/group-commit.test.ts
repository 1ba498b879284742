import Database from "better-sqlite3";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import type { Synchronous } from "../../src/store/sqlite/db.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import type { Commit } from "../../src/store/commit.js";

// Group commit (issue 12): with synchronous FULL (the default) a write is acknowledged only after a sync of the
// database log that started after its commit, and the commits that arrive while a sync runs share the next one.
// The commits of one turn of the event loop share one transaction, each in its own savepoint: one that fails rolls
// back alone with its own error (commit-batches.test.ts has the batches themselves).

let dir: string;
let store: Store | undefined;
const at = new Date("2026-01-01T00:00:00Z");
const path = () => join(dir, "db.sqlite");

/** The log syncs the store asks for, each held until released, then really done (fdatasync of the WAL). */
function heldSyncs() {
  const syncs: { release: () => void; done: Promise<void> }[] = [];
  let announce = () => {};
  return {
    syncs,
    /** Resolves once `count` syncs have been asked for. */
    asked: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (syncs.length >= count ? resolve() : (announce = check));
        check();
      }),
    syncLog: (sync: () => Promise<void>) => {
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      const done = released.then(sync);
      syncs.push({ release, done });
      announce();
      return done;
    },
  };
}

function openStore(
  synchronous: Synchronous,
  options: { syncLog?: (sync: () => Promise<void>) => Promise<void>; onSync?: (n: number) => void; onSyncFailure?: (error: unknown) => void } = {},
): Store {
  store = createSqliteStore({ path: path(), synchronous, busyTimeoutMs: 1000, ...options });
  return store;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-group-commit-"));
});
afterEach(async () => {
  await store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const base = (writes: Commit["writes"], events: Commit["events"]): Commit => ({ instanceId: "i1", actor: "tester", at, writes, events });
const setUp = base(
  [
    { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
    { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "o1", nameKey: "o1", state: "active" } },
  ],
  [],
);
const user = (id: string, userName: string): Commit["writes"][number] => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName, userNameKey: userName.toLowerCase(), machineName: "m", machineDescription: "" },
});
const addUser = (id: string, userName = id) => base([user(id, userName)], [{ aggregateType: "user", aggregateId: id, type: "user.machine.added", payload: {}, resourceOwner: "o1" }]);
const settled = <T>(promise: Promise<T>) => {
  const state = { done: false };
  void promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return state;
};

describe("group commit (synchronous FULL)", () => {
  it("acknowledges a write only after a sync of the log that started after its commit", async () => {
    const held = heldSyncs();
    const s = openStore("FULL", { syncLog: held.syncLog });
    const first = s.commit(setUp);
    await held.asked(1);
    const state = settled(first);
    // Committed (another connection sees it), not yet acknowledged: its sync is held.
    const reader = new Database(path(), { readonly: true });
    try {
      expect(reader.prepare("SELECT id FROM instances").get()).toEqual({ id: "i1" });
    } finally {
      reader.close();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.done).toBe(false);
    held.syncs[0]!.release();
    await first;
    expect(state.done).toBe(true);
  });

  it("makes the writes that arrive while a sync runs durable together, with the next sync", async () => {
    const held = heldSyncs();
    const sizes: number[] = [];
    const s = openStore("FULL", { syncLog: held.syncLog, onSync: (n) => sizes.push(n) });
    const first = s.commit(setUp);
    await held.asked(1);
    const later = ["u1", "u2", "u3"].map((id) => s.commit(addUser(id)));
    const states = later.map(settled);
    held.syncs[0]!.release();
    await first;
    // The first sync started before these commits: it does not count for them.
    await held.asked(2);
    expect(states.map((st) => st.done)).toEqual([false, false, false]);
    held.syncs[1]!.release();
    await Promise.all(later);
    expect(held.syncs).toHaveLength(2);
    // The first sync also covered what the migrations wrote when the store opened.
    expect(sizes).toEqual([2, 3]);
  });

  it("after a failed sync refuses every write and answer (the disk may have dropped them), and says so once", async () => {
    let calls = 0;
    const failures: unknown[] = [];
    const s = openStore("FULL", {
      syncLog: async (sync) => {
        calls += 1;
        if (calls === 2) throw Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
        await sync();
      },
      onSyncFailure: (error) => failures.push(error),
    });
    await s.commit(setUp);
    const unavailable = { kind: "unavailable", reason: "store.sync_failed" };
    await expect(s.commit(addUser("u1"))).rejects.toMatchObject(unavailable);
    // A later write is refused before it is applied; the barrier every answer waits for fails too.
    await expect(s.commit(addUser("u2"))).rejects.toMatchObject(unavailable);
    await expect(s.durable()).rejects.toMatchObject(unavailable);
    expect(calls).toBe(2);
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toContain("EIO");
    const reader = new Database(path(), { readonly: true });
    try {
      expect(reader.prepare("SELECT id FROM users WHERE id = 'u2'").get()).toBeUndefined();
    } finally {
      reader.close();
    }
  });

  it("answers the barrier at once when no commit waits for its sync, and after the sync when one does", async () => {
    const held = heldSyncs();
    const s = openStore("FULL", { syncLog: held.syncLog });
    // What the migrations wrote at open is synced by the first barrier; the next one has nothing to wait for.
    const first = s.durable();
    await held.asked(1);
    held.syncs[0]!.release();
    await first;
    await s.durable();
    expect(held.syncs).toHaveLength(1);
    const write = s.commit(setUp);
    const barrier = settled(s.durable());
    await held.asked(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(barrier.done).toBe(false);
    held.syncs[1]!.release();
    await write;
    await s.durable();
    expect(barrier.done).toBe(true);
  });

  it("syncs the log for a commit another connection made (recover-admin beside the server) before answering a call that read it", async () => {
    const held = heldSyncs();
    const s = openStore("FULL", { syncLog: held.syncLog });
    const write = s.commit(setUp);
    await held.asked(1);
    held.syncs[0]!.release();
    await write;
    const other = new Database(path());
    try {
      other.prepare("UPDATE organizations SET name = 'renamed elsewhere' WHERE id = 'o1'").run();
    } finally {
      other.close();
    }
    // A call that starts after that commit runs in a later turn of the event loop; its read shows the commit.
    await new Promise((resolve) => setImmediate(resolve));
    expect((await s.findOrganizationById("o1"))?.name).toBe("renamed elsewhere");
    const barrier = settled(s.durable());
    await held.asked(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(barrier.done).toBe(false);
    held.syncs[1]!.release();
    await s.durable();
    expect(barrier.done).toBe(true);
  });

  it("a read right after this store's own commit, in the same turn of the event loop, shows it; other connections see it when the turn's batch commits", async () => {
    const s = openStore("FULL");
    await s.commit(setUp);
    expect(await s.findUserById("r1")).toBeUndefined();
    const write = s.commit(addUser("r1"));
    const other = new Database(path(), { readonly: true });
    try {
      const seenByOther = () => other.prepare("SELECT user_name FROM users WHERE id = 'r1'").pluck().get();
      // Applied in the turn's transaction: this store's reads see it, another connection not before the batch commits.
      expect((await s.findUserById("r1"))?.userName).toBe("r1");
      expect(seenByOther()).toBeUndefined();
      await write;
      expect(seenByOther()).toBe("r1");
    } finally {
      other.close();
    }
    // And the store writes again after reads of the same turn (no write runs inside a read snapshot).
    expect(await s.findUserById("r2")).toBeUndefined();
    await s.commit(addUser("r2"));
    expect((await s.findUserById("r2"))?.userName).toBe("r2");
  });

  it("rolls back a failing write alone: it gets its own error, the writes around it are kept", async () => {
    const s = openStore("FULL");
    await s.commit(setUp);
    const outcomes = await Promise.allSettled([s.commit(addUser("a1", "same")), s.commit(addUser("a2", "same")), s.commit(addUser("a3", "other"))]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const error = (outcomes[1] as PromiseRejectedResult).reason as DomainError;
    expect(error).toBeInstanceOf(DomainError);
    expect(error.kind).toBe("already_exists");
    expect(await s.findUserById("a2")).toBeUndefined();
    expect(await s.listEvents({ aggregateId: "a2", limit: 10 })).toEqual([]);
    expect(await s.findUserById("a3")).toBeDefined();
  });
});

describe("the log the store syncs", () => {
  it("is the one SQLite writes, also when the database path is a symbolic link", async () => {
    const target = join(dir, "real");
    mkdirSync(target);
    symlinkSync(join(target, "db.sqlite"), join(dir, "link.sqlite"));
    // A fresh file at the link's target: SQLite resolves the link and keeps its log beside the target.
    store = createSqliteStore({ path: join(dir, "link.sqlite"), synchronous: "FULL", busyTimeoutMs: 1000 });
    await store.commit(setUp);
    expect(existsSync(join(target, "db.sqlite-wal"))).toBe(true);
    expect(existsSync(join(dir, "link.sqlite-wal"))).toBe(false);
  });
});

describe("without group commit", () => {
  it.each<Synchronous>(["NORMAL", "OFF"])("%s acknowledges without waiting for a sync of the log", async (synchronous) => {
    let syncs = 0;
    const s = openStore(synchronous, {
      syncLog: async (sync) => {
        syncs += 1;
        await sync();
      },
    });
    await s.commit(setUp);
    await s.commit(addUser("u1"));
    await s.durable();
    expect(syncs).toBe(0);
  });

  it("EXTRA waits for the sync like FULL", async () => {
    let syncs = 0;
    const s = openStore("EXTRA", {
      syncLog: async (sync) => {
        syncs += 1;
        await sync();
      },
    });
    await s.commit(setUp);
    expect(syncs).toBe(1);
  });
});

describe("closing", () => {
  it("may happen twice", async () => {
    const s = openStore("FULL");
    await s.commit(setUp);
    await s.close();
    await expect(s.close()).resolves.toBeUndefined();
  });
});
