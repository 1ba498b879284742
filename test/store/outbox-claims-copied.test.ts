import { beforeEach, describe, expect, it } from "vitest";
import type { OutboxRow } from "../../src/store/rows.js";
import type { OutboxClaim } from "../../src/store/store.js";
import type { RowWrite } from "../../src/store/commit.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf, machineUser } from "./fixtures.js";

// Store.claimDueOutbox with `skipCopied` (src/store/store.ts OutboxClaim): while no SMTP configuration exists, a mail
// copied to the mail dir stays pending, parked for an SMTP server — it neither fills a claim nor holds back its user's
// newer mails, which get claimed (and copied) in turn; once a server exists (no skipCopied) it is claimed again, first.
// (Without it, the oldest copied mails filled every claim and no newer mail was ever copied: found by the API suite.)

const mail = (id: string, userId: string | null): OutboxRow => ({
  id,
  instanceId: "i1",
  template: "user.initialization",
  recipient: `${id}@example.com`,
  userId,
  messageSealed: `v1.${id}`,
  status: "pending",
  attempts: 0,
  nextAttemptAt: 100,
  createdAt: 100,
  copiedAt: null,
});
const ids = (rows: OutboxRow[]) => rows.map((row) => row.id);
const claim = (limit: number, skipCopied: boolean, owner = "A", now = 1_000): OutboxClaim => ({ owner, now, limit, leaseMs: 100, skipCopied });

describe.each(storeEngines())("claims of copied mails on $name", (engine) => {
  const { store } = useStore(engine);
  const commit = (...writes: RowWrite[]) => store().commit(commitOf(writes));

  beforeEach(async () => {
    await commit({ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } });
    await commit(machineUser("u1"), machineUser("u2"));
    await commit(...[mail("old-1", "u1"), mail("old-2", "u2"), mail("old-3", null), mail("new-1", "u1"), mail("new-2", null)].map((row): RowWrite => ({ kind: "outbox.insert", row })));
    await commit(...["old-1", "old-2", "old-3"].map((id): RowWrite => ({ kind: "outbox.copied", id, at: 500 })));
  });

  it("skipping copied mails, a claim takes the newer ones, also a user's newer mail behind its copied one", async () => {
    expect(ids(await store().claimDueOutbox(claim(2, true)))).toEqual(["new-1", "new-2"]);
  });

  it("with an SMTP server, the copied mails are claimed again, oldest first, each user's in order", async () => {
    expect(ids(await store().claimDueOutbox(claim(10, false, "B", 2_000)))).toEqual(["old-1", "old-2", "old-3", "new-1", "new-2"]);
  });
});
