import { beforeEach, describe, expect, it } from "vitest";
import type { OutboxRow } from "../../src/store/rows.js";
import type { RowWrite } from "../../src/store/commit.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf, machineUser } from "./fixtures.js";

// The outbox's retention (Store.pruneFinishedOutbox, README "Outgoing mail"), on every engine: finished mails (sent or
// failed) queued before the cut-off are deleted, oldest first, at most `limit` at a time; a pending mail — also one
// parked as a copy, or claimed — and a finished one queued after the cut-off stay; the events stay.

const mail = (id: string, status: OutboxRow["status"], createdAt: number, extra: Partial<OutboxRow> = {}): OutboxRow => ({
  id,
  instanceId: "i1",
  template: "user.verification",
  recipient: `${id}@example.com`,
  userId: "u1",
  messageSealed: `v1.${id}`,
  status,
  attempts: status === "pending" ? 0 : 1,
  nextAttemptAt: createdAt,
  createdAt,
  copiedAt: null,
  ...extra,
});

describe.each(storeEngines())("the outbox's retention on $name", (engine) => {
  const { store } = useStore(engine);
  const commit = (...writes: RowWrite[]) => store().commit(commitOf(writes));
  const left = async () => (await store().listOutbox({ limit: 100 })).map((row) => row.id).sort();

  beforeEach(async () => {
    await commit({ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } });
    await commit(machineUser("u1"));
  });

  it("deletes finished mails queued before the cut-off, and answers how many; pending and newer ones stay", async () => {
    await commit(
      ...[
        mail("sent-old", "sent", 1_000),
        mail("failed-old", "failed", 2_000),
        mail("sent-at-cutoff", "sent", 5_000),
        mail("sent-new", "sent", 9_000),
        mail("pending-old", "pending", 1_000),
        mail("copied-old", "pending", 1_500, { copiedAt: 1_600 }),
      ].map((row): RowWrite => ({ kind: "outbox.insert", row })),
    );
    expect(await store().pruneFinishedOutbox({ queuedBefore: 5_000, limit: 100 })).toBe(2);
    expect(await left()).toEqual(["copied-old", "pending-old", "sent-at-cutoff", "sent-new"]);
    // Nothing more to delete before the cut-off.
    expect(await store().pruneFinishedOutbox({ queuedBefore: 5_000, limit: 100 })).toBe(0);
  });

  it("deletes at most `limit` at a time, the oldest first", async () => {
    await commit(...[3_000, 1_000, 4_000, 2_000].map((at): RowWrite => ({ kind: "outbox.insert", row: mail(`sent-${at}`, "sent", at) })));
    expect(await store().pruneFinishedOutbox({ queuedBefore: 10_000, limit: 2 })).toBe(2);
    expect(await left()).toEqual(["sent-3000", "sent-4000"]);
    expect(await store().pruneFinishedOutbox({ queuedBefore: 10_000, limit: 2 })).toBe(2);
    expect(await left()).toEqual([]);
  });
});
