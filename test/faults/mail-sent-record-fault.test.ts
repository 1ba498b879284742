import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Store } from "../../src/store/store.js";
import type { Commit } from "../../src/store/commit.js";
import { DomainError } from "../../src/domain/errors.js";
import { waitForOutbox } from "../support/outbox.js";
import { TestClock, useTestServer } from "../support/server.js";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp.js";

/**
 * The relay has accepted a mail, then the commit that records `outbox.sent` fails (a busy or full
 * disk, a lost connection on a networked store). That failure is not a failed delivery: the worker
 * must not send the mail again, nor record a failed attempt for a mail that arrived. Only a fault
 * can show this, so the real store of a running server is wrapped to throw for that one commit.
 */
const t = useTestServer({ clock: new TestClock(new Date(), true), config: { mail: { smtpTimeoutMs: 2_000, pollMs: 20, maxAttempts: 5, retryBaseMs: 20 } } });
let relay: TestSmtpServer;
let realStore: Store;
/** Outbox ids whose `outbox.sent` commit was made to fail. */
const failedSentRecords: string[] = [];
/** What the next commit recording `outbox.sent` throws (once). */
let nextFailure: Error | undefined;

/** The real store, except that the next commit recording `outbox.sent` (the relay already took the mail) throws. */
function failFirstSentRecord(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property !== "commit") return typeof value === "function" ? value.bind(target) : value;
      return async (commit: Commit) => {
        const sent = commit.writes.find((write) => write.kind === "outbox.sent");
        const failure = nextFailure;
        if (sent && "id" in sent && failure) {
          nextFailure = undefined;
          failedSentRecords.push(sent.id);
          throw failure;
        }
        return target.commit(commit);
      };
    },
  });
}

beforeAll(async () => {
  relay = await startSmtpServer({ tls: "none" });
  realStore = t.server.gatehouse.deps.store;
  // The worker reads deps.store on every call, so swapping it here puts the fault under the running worker.
  t.server.gatehouse.deps.store = failFirstSentRecord(realStore);
  await t.clients.client(SmtpService, "grpc-h2c", { token: t.server.adminToken }).createSmtpConfig({
    senderAddress: "noreply@gatehouse.test",
    senderName: "Gatehouse",
    tls: false,
    host: `127.0.0.1:${relay.port}`,
  });
});
afterAll(async () => {
  t.server.gatehouse.deps.store = realStore;
  await relay.close();
});

describe("a mail whose `sent` record fails after the relay accepted it", () => {
  it.each([
    ["with an unexpected error", "accepted-once", new Error("injected: the commit recording outbox.sent failed")],
    // A typed refusal of the store that is not a lost claim (store.condition_failed) is no reason to forget the acceptance.
    ["with the store busy", "accepted-once-busy", new DomainError("unavailable", "store.busy", "injected: the database is busy; retry")],
  ])("%s: is delivered once, recorded sent once, and never counted as a failed attempt", async (_how, name, failure) => {
    const email = `${name}@example.com`;
    const admin = { token: t.server.adminToken };
    nextFailure = failure;
    const { userId } = await t.clients.client(UserService, "grpc-h2c", admin).createHumanUser({ userName: name, profile: { firstName: "A", lastName: "O" }, email: { email } });
    const events = t.clients.client(EventService, "grpc-h2c", admin);
    const queued = (await events.listEvents({ aggregateId: userId })).events.find((e) => e.eventType === "user.notification.queued");
    const outboxId = String(queued?.payload?.outboxId);

    // Once the row left `pending` no pass picks it up again, so the counts below are final.
    const row = await waitForOutbox(t.server.dataDir, email);
    expect(failedSentRecords.at(-1)).toBe(outboxId);
    expect(relay.received.filter((mail) => mail.to.includes(email))).toHaveLength(1);
    expect(row).toEqual({ id: outboxId, status: "sent", attempts: 1 });
    const recorded = (await events.listEvents({ aggregateId: outboxId, pageSize: 100 })).events.map((e) => e.eventType);
    expect(recorded).toEqual(["notification.sent"]);
  });
});
