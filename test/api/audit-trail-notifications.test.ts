import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, describe, expect, it } from "vitest";
import type { Event } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { AuditTrail, idIn, instanceIdOf, type TrailEntry, trailEntry } from "../support/audit-trail.js";
import { eventually } from "../support/eventually.js";
import { TestClock, useTestServer } from "../support/server.js";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp.js";

/*
 * The delivery worker's events of the catalogue at Event.payload (proto/gatehouse/admin/v1/event.proto),
 * against real SMTP servers on 127.0.0.1: every attempt on a queued mail is an event on its
 * `notification` aggregate (the outbox id of its `user.notification.queued`), caused by `system`.
 * notification.copied (no SMTP configuration) is in audit-trail-users.test.ts, whose server never has one.
 */
const t = useTestServer({ clock: new TestClock(new Date(), true), config: { mail: { smtpTimeoutMs: 2_000, pollMs: 50, maxAttempts: 2, retryBaseMs: 100 } } });
const trail = () => new AuditTrail(t.clients, t.server.adminToken);
const admin = () => ({ token: t.server.adminToken });
const relays: TestSmtpServer[] = [];
afterAll(async () => {
  await Promise.all(relays.map((relay) => relay.close()));
});

async function relay(options: Parameters<typeof startSmtpServer>[0]): Promise<TestSmtpServer> {
  const started = await startSmtpServer(options);
  relays.push(started);
  return started;
}

/** Points the instance's SMTP configuration at `host` (creating it the first time). */
async function useSmtp(host: string) {
  const smtp = t.clients.client(SmtpService, "connect-json-http1", admin());
  const config = { senderAddress: "noreply@trail.example.com", senderName: "Trail", tls: false, host, user: "" };
  const exists = await smtp.getSmtpConfig({}).then(
    () => true,
    () => false,
  );
  if (exists) await smtp.updateSmtpConfig(config);
  else await smtp.createSmtpConfig(config);
}

/** A human user whose unverified email queues an initialization mail; its outbox id, read from the user's trail. */
async function queueMail(userName: string) {
  const email = `${userName}@example.com`;
  const { events } = await trail().record(
    () => t.clients.client(UserService, "grpc-h2c", admin()).createHumanUser({ userName, profile: { firstName: "Mai", lastName: "Ler" }, email: { email }, password: "Sup3r-secret!" }),
    (r) => ({ aggregateType: "user", aggregateId: r.userId }),
  );
  return { email, outboxId: idIn(events, "user.notification.queued", "outboxId") };
}

/** The notification's events once one of type `last` is there. */
function notificationTrail(outboxId: string, last: string): Promise<Event[]> {
  return eventually(
    async () => {
      const events = await trail().all({ aggregateType: "notification", aggregateId: outboxId }, "grpc-web-http1");
      return events.some((event) => event.eventType === last) ? events : undefined;
    },
    { what: `${last} for ${outboxId}`, timeoutMs: 15_000 },
  );
}

describe("audit trail: mail delivery", () => {
  it("notification.sent names the template, the attempt, the host and the SMTP server's answer", async () => {
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const accepting = await relay({ tls: "none", acceptDataWith: () => "queued as TRAIL-4711" });
    const host = `127.0.0.1:${accepting.port}`;
    await useSmtp(host);
    const { email, outboxId } = await queueMail("trail-sent");
    await accepting.waitFor((mail) => mail.to.includes(email));
    const events = await notificationTrail(outboxId, "notification.sent");
    expect(events.map(trailEntry)).toEqual<TrailEntry[]>([
      {
        type: "notification.sent",
        aggregateType: "notification",
        aggregateId: outboxId,
        resourceOwner: instanceId,
        actor: "system",
        payload: { template: "user.initialization", attempt: 1, host, response: "250 queued as TRAIL-4711" },
      },
    ]);
  });

  it("notification.failed names the attempt, the host and the error when the server refuses the message for good", async () => {
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const refusing = await relay({ tls: "none", rejectRecipients: ["trail-refused@example.com"] });
    const host = `127.0.0.1:${refusing.port}`;
    await useSmtp(host);
    const { outboxId } = await queueMail("trail-refused");
    const events = await notificationTrail(outboxId, "notification.failed");
    expect(events.map(trailEntry)).toEqual<TrailEntry[]>([
      {
        type: "notification.failed",
        aggregateType: "notification",
        aggregateId: outboxId,
        resourceOwner: instanceId,
        actor: "system",
        payload: { template: "user.initialization", attempt: 1, host, error: expect.stringContaining("550") },
      },
    ]);
  });

  it("a failed attempt that will be retried is notification.attempt.failed with the next attempt's time; the last one notification.failed", async () => {
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const gone = await startSmtpServer({ tls: "none" });
    await gone.close();
    const host = `127.0.0.1:${gone.port}`;
    await useSmtp(host);
    const { outboxId } = await queueMail("trail-unreachable");
    const events = await notificationTrail(outboxId, "notification.failed");
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "notification", aggregateId: outboxId, resourceOwner: instanceId, actor: "system", payload });
    expect(events.map(trailEntry)).toEqual<TrailEntry[]>([
      entry("notification.attempt.failed", {
        template: "user.initialization",
        attempt: 1,
        host,
        error: expect.stringMatching(/\S/),
        nextAttemptAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      }),
      entry("notification.failed", { template: "user.initialization", attempt: 2, host, error: expect.stringMatching(/\S/) }),
    ]);
    // The retry is due the first retry delay (100 ms, with jitter of ±50 %) after the attempt.
    const retryIn = Date.parse(String(events[0]!.payload!.nextAttemptAt)) - timestampDate(events[0]!.creationDate!).getTime();
    expect(retryIn).toBeGreaterThanOrEqual(40);
    expect(retryIn).toBeLessThanOrEqual(150);
  });
});
