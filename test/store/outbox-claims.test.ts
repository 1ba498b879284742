import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { createPostgresStore } from "../../src/store/postgres/pg-store.js";
import type { OutboxRow } from "../../src/store/rows.js";
import type { OutboxClaim, Store } from "../../src/store/store.js";
import type { RowWrite } from "../../src/store/commit.js";
import { createTestDatabase } from "../support/postgres.js";
import { testCluster } from "../support/postgres-cluster.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf, machineUser } from "./fixtures.js";

// The outbox claim of the Store contract (Store.claimDueOutbox), on every engine, with two stores on one database
// standing for two replicas' delivery workers: a message goes to one worker at a time; a worker's lease ends and
// another may then take the message over; an outcome (sent, retry, failed) is recorded only by the worker that still
// holds the message; and a user's messages are claimed in order, never a newer one while an older one is held by
// another worker or not yet due.

const mail = (id: string, userId: string | null, nextAttemptAt = 100): OutboxRow => ({
  id,
  instanceId: "i1",
  template: "user.initialization",
  recipient: `${id}@example.com`,
  userId,
  messageSealed: `v1.${id}`,
  status: "pending",
  attempts: 0,
  nextAttemptAt,
  createdAt: 100,
  copiedAt: null,
});
const queue = (...rows: OutboxRow[]): RowWrite[] => rows.map((row) => ({ kind: "outbox.insert", row }));
const claimOf = (owner: string, now: number, limit = 10, leaseMs = 1_000): OutboxClaim => ({ owner, now, limit, leaseMs });
const ids = (rows: OutboxRow[]) => rows.map((row) => row.id);

async function refusal(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return error instanceof DomainError ? error.reason : String(error);
  }
}

describe.each(storeEngines())("outbox claims on $name", (engine) => {
  const { store, another } = useStore(engine);
  const commit = (...writes: RowWrite[]) => store().commit(commitOf(writes));
  /** The test's store is worker A; `replicaB` a second store on the same database (worker B). */
  let replicaB: Store;

  beforeEach(async () => {
    await commit({ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } });
    await commit(machineUser("u1"), machineUser("u2"), machineUser("u3"));
    replicaB = await another();
  });

  it("takes pending due messages, oldest first, marked with the claiming worker and the end of its lease", async () => {
    await commit(...queue(mail("m1", "u1"), mail("m2", "u2"), mail("later", "u3", 5_000), mail("m3", null)));
    await commit(...queue({ ...mail("done", null), status: "sent" }, { ...mail("gave-up", null), status: "failed" }));
    const claimed = await store().claimDueOutbox(claimOf("A", 1_000, 10, 300));
    expect(ids(claimed)).toEqual(["m1", "m2", "m3"]);
    expect(claimed[0]).toEqual({ ...mail("m1", "u1"), claimedBy: "A", claimedUntil: 1_300 });
    const stored = Object.fromEntries((await store().listOutbox({ limit: 10 })).map((row) => [row.id, row]));
    expect(stored["m2"]).toMatchObject({ claimedBy: "A", claimedUntil: 1_300 });
    expect(stored["later"]).toMatchObject({ claimedBy: null, claimedUntil: null });
    // At most `limit`, the oldest.
    expect(ids(await replicaB.claimDueOutbox(claimOf("B", 5_000, 1)))).toEqual(["m1"]);
  });

  it("two workers claiming at once never get the same message, and together get every due one", async () => {
    const queued = Array.from({ length: 12 }, (_, i) => mail(`c${i}`, null));
    await commit(...queue(...queued));
    const seen: Record<string, string[]> = { A: [], B: [] };
    /** One pass of a worker: claim two, record them sent (as the holder). */
    const pass = async (worker: Store, owner: "A" | "B") => {
      const claimed = await worker.claimDueOutbox(claimOf(owner, 1_000, 2));
      seen[owner]!.push(...ids(claimed));
      if (claimed.length > 0) await worker.commit(commitOf(claimed.map((row): RowWrite => ({ kind: "outbox.sent", id: row.id, attempts: 1, owner }))));
      return claimed.length;
    };
    for (let round = 0; round < 12; round++) {
      const [a, b] = await Promise.all([pass(store(), "A"), pass(replicaB, "B")]);
      if (a + b === 0) break;
    }
    const all = [...seen["A"]!, ...seen["B"]!];
    expect(all.sort()).toEqual(ids(queued).sort());
    // Each message is stored as sent by the worker that claimed it.
    for (const row of await store().listOutbox({ limit: 20 })) {
      expect(row.status).toBe("sent");
      expect(seen[row.claimedBy!]).toContain(row.id);
    }
  });

  it("a held message goes to another worker only once its lease has ended; its own worker renews it", async () => {
    await commit(...queue(mail("m1", "u1")));
    expect(ids(await store().claimDueOutbox(claimOf("A", 1_000, 10, 500)))).toEqual(["m1"]);
    expect(await replicaB.claimDueOutbox(claimOf("B", 1_499))).toEqual([]);
    // A claims again (a pass after a failed record): its own message, the lease renewed.
    expect(await store().claimDueOutbox(claimOf("A", 1_400, 10, 500))).toEqual([expect.objectContaining({ id: "m1", claimedBy: "A", claimedUntil: 1_900 })]);
    expect(await replicaB.claimDueOutbox(claimOf("B", 1_899))).toEqual([]);
    // A killed mid-send: at the end of its lease, B takes the message over.
    expect(await replicaB.claimDueOutbox(claimOf("B", 1_900, 10, 700))).toEqual([expect.objectContaining({ id: "m1", claimedBy: "B", claimedUntil: 2_600 })]);
    expect(await store().claimDueOutbox(claimOf("A", 2_000))).toEqual([]);
  });

  it("an outcome is recorded only by the worker that holds the message: a late one's sent, retry or failed is refused and writes nothing", async () => {
    await commit(...queue(mail("m1", "u1"), mail("m2", "u2"), mail("m3", "u3")));
    await store().claimDueOutbox(claimOf("A", 1_000, 10, 100));
    expect(ids(await replicaB.claimDueOutbox(claimOf("B", 1_100)))).toEqual(["m1", "m2", "m3"]);
    const late = (write: RowWrite) =>
      store().commit({
        ...commitOf([write]),
        events: [{ aggregateType: "notification", aggregateId: "id" in write ? write.id : "?", type: "notification.sent", payload: {}, resourceOwner: "i1" }],
      });
    const before = await store().countEvents({});
    expect(await refusal(late({ kind: "outbox.sent", id: "m1", attempts: 1, owner: "A" }))).toBe("store.condition_failed");
    expect(await refusal(late({ kind: "outbox.retry", id: "m2", attempts: 1, nextAttemptAt: 9_000, owner: "A" }))).toBe("store.condition_failed");
    expect(await refusal(late({ kind: "outbox.failed", id: "m3", attempts: 1, owner: "A" }))).toBe("store.condition_failed");
    expect(await store().countEvents({})).toBe(before);
    for (const row of await store().listOutbox({ limit: 10 })) expect(row).toMatchObject({ status: "pending", attempts: 0, claimedBy: "B", nextAttemptAt: 100 });
    // The holder's outcomes are recorded.
    await replicaB.commit(
      commitOf([
        { kind: "outbox.sent", id: "m1", attempts: 1, owner: "B" },
        { kind: "outbox.retry", id: "m2", attempts: 1, nextAttemptAt: 9_000, owner: "B" },
        { kind: "outbox.failed", id: "m3", attempts: 1, owner: "B" },
      ]),
    );
    const byId = Object.fromEntries((await store().listOutbox({ limit: 10 })).map((row) => [row.id, row]));
    expect(byId["m1"]).toMatchObject({ status: "sent", attempts: 1 });
    expect(byId["m2"]).toMatchObject({ status: "pending", attempts: 1, nextAttemptAt: 9_000 });
    expect(byId["m3"]).toMatchObject({ status: "failed", attempts: 1 });
    // Recorded once: the holder's second `sent` finds the message no longer pending.
    expect(await refusal(replicaB.commit(commitOf([{ kind: "outbox.sent", id: "m1", attempts: 2, owner: "B" }])))).toBe("store.condition_failed");
  });

  it("a retry ends the claim: once due again, any worker may take the message, before the old lease would have ended", async () => {
    await commit(...queue(mail("m1", "u1")));
    await store().claimDueOutbox(claimOf("A", 1_000, 10, 10_000));
    await store().commit(commitOf([{ kind: "outbox.retry", id: "m1", attempts: 1, nextAttemptAt: 2_000, owner: "A" }]));
    expect((await store().listOutbox({ limit: 1 }))[0]).toMatchObject({ claimedBy: null, claimedUntil: null });
    expect(await replicaB.claimDueOutbox(claimOf("B", 1_999))).toEqual([]);
    expect(ids(await replicaB.claimDueOutbox(claimOf("B", 2_000)))).toEqual(["m1"]);
  });

  it("a stopping worker releases what it still holds, pending: another worker takes it at once; what it recorded keeps its owner", async () => {
    await commit(...queue(mail("m1", "u1"), mail("m2", "u2"), mail("m3", "u3")));
    expect(ids(await store().claimDueOutbox(claimOf("A", 1_000, 2, 60_000)))).toEqual(["m1", "m2"]);
    expect(ids(await replicaB.claimDueOutbox(claimOf("B", 1_000, 10, 60_000)))).toEqual(["m3"]);
    await store().commit(commitOf([{ kind: "outbox.sent", id: "m1", attempts: 1, owner: "A" }]));
    await store().releaseOutboxClaims("A");
    const byId = Object.fromEntries((await store().listOutbox({ limit: 10 })).map((row) => [row.id, row]));
    expect(byId["m1"]).toMatchObject({ status: "sent", claimedBy: "A" });
    expect(byId["m2"]).toMatchObject({ status: "pending", claimedBy: null, claimedUntil: null });
    // Another worker's claim is not A's to release.
    expect(byId["m3"]).toMatchObject({ claimedBy: "B", claimedUntil: 61_000 });
    expect(ids(await replicaB.claimDueOutbox(claimOf("C", 1_001)))).toEqual(["m2"]);
  });

  describe("in order per user", () => {
    it("a user's newer message is not claimed while an older one is held by another worker; it is once that one is sent", async () => {
      await commit(...queue(mail("old", "u1"), mail("new", "u1"), mail("other", "u2")));
      expect(ids(await store().claimDueOutbox(claimOf("A", 1_000, 1)))).toEqual(["old"]);
      // Another user's message is not held up.
      expect(ids(await replicaB.claimDueOutbox(claimOf("B", 1_000)))).toEqual(["other"]);
      await store().commit(commitOf([{ kind: "outbox.sent", id: "old", attempts: 1, owner: "A" }]));
      expect(ids(await replicaB.claimDueOutbox(claimOf("C", 1_001)))).toEqual(["new"]);
    });

    it("a user's newer message waits while an older one is not yet due (a retry), then both go to one worker, oldest first", async () => {
      await commit(...queue(mail("old", "u1", 3_000), mail("new", "u1", 100)));
      expect(await store().claimDueOutbox(claimOf("A", 1_000))).toEqual([]);
      expect(await replicaB.claimDueOutbox(claimOf("B", 2_999))).toEqual([]);
      expect(ids(await replicaB.claimDueOutbox(claimOf("B", 3_000)))).toEqual(["old", "new"]);
      expect(await store().claimDueOutbox(claimOf("A", 3_000))).toEqual([]);
    });

    it("a failed message does not hold the user's next one; messages that name no user are not ordered", async () => {
      await commit(...queue(mail("old", "u1"), mail("new", "u1"), mail("n1", null, 3_000), mail("n2", null)));
      await store().claimDueOutbox(claimOf("A", 1_000, 1));
      await store().commit(commitOf([{ kind: "outbox.failed", id: "old", attempts: 1, owner: "A" }]));
      expect(ids(await replicaB.claimDueOutbox(claimOf("B", 1_000)))).toEqual(["new", "n2"]);
    });
  });
});

describe("outbox claims on postgres, racing", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("a worker that skips a user's older message (another worker is claiming it right now) does not take the newer one", async () => {
    const database = await createTestDatabase(testCluster());
    cleanups.push(database.drop);
    const store = await createPostgresStore({ url: database.url, poolSize: 2 });
    cleanups.push(() => store.close());
    await store.commit(commitOf([{ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } }]));
    await store.commit(commitOf([machineUser("u1"), machineUser("u2"), ...queue(mail("old", "u1"), mail("new", "u1"), mail("other", "u2"))]));
    // Another worker's claim in flight: it has locked the older message and not committed yet.
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    cleanups.push(() => other.end());
    await other.query("BEGIN");
    await other.query("SELECT id FROM outbox WHERE id = 'old' FOR UPDATE");
    expect(ids(await store.claimDueOutbox(claimOf("B", 1_000)))).toEqual(["other"]);
    await other.query("ROLLBACK");
    expect(ids(await store.claimDueOutbox(claimOf("C", 1_000)))).toEqual(["old", "new"]);
  });
});
