import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { eventually } from "../support/eventually.js";
import { waitForNotification } from "../support/outbox.js";
import { TestClock, useTestServer } from "../support/server.js";
import { echoOfLogin, makeTestCa, passwordLeaks, startSmtpServer, type SmtpServerOptions, type TestSmtpServer } from "../support/smtp.js";

/**
 * A relay that echoes the login exchange (the password plain, base64, inside the AUTH PLAIN blob)
 * in its replies: none of it may reach events, the log, the database file or TestSmtpConfig.
 */
const PASSWORD = "Relay-Pa55word!";
const USER = "mailer";
/** The relays offer STARTTLS with a certificate from this CA: the password is only ever sent over TLS. */
const ca = makeTestCa();
// Mail retries wait for real time, so the clock follows it.
const t = useTestServer({ clock: new TestClock(new Date(), true), config: { mail: { smtpCaFile: ca.caFile, smtpTimeoutMs: 2_000, pollMs: 50, maxAttempts: 2, retryBaseMs: 50 } } });
const relays: TestSmtpServer[] = [];
let n = 0;
afterAll(() => Promise.all(relays.map((r) => r.close())));

const admin = () => ({ token: t.server.adminToken });
const smtp = (protocol: "connect-json-http1" | "grpc-h2c" | "grpc-web-http1" = "connect-json-http1") => t.clients.client(SmtpService, protocol, admin());
const events = () => t.clients.client(EventService, "connect-proto-h2c", admin());

/** A relay on which the gatehouse password never passes, and which says so with the echo. */
async function echoingRelay(options: Partial<SmtpServerOptions> = {}) {
  const relay = await startSmtpServer({ tls: "starttls", certificate: ca, auth: { user: USER, pass: "what-the-relay-wants" }, rejectAuthWith: echoOfLogin, ...options });
  relays.push(relay);
  return relay;
}
async function useRelay(relay: TestSmtpServer) {
  const config = { senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: false, host: `127.0.0.1:${relay.port}`, user: USER };
  const exists = await smtp().getSmtpConfig({}).then(() => true, () => false);
  if (exists) await smtp().updateSmtpConfig(config);
  else await smtp().createSmtpConfig(config);
  await smtp().setSmtpPassword({ password: PASSWORD });
}
/** Queues a verification mail; answers its outbox id. */
async function queueMail() {
  const users = t.clients.client(UserService, "connect-json-http1", admin());
  const { userId } = await users.createHumanUser({ userName: `relay-${++n}`, profile: { firstName: "Re", lastName: "Lay" }, email: { email: `relay-${n}@example.com` }, password: "Sup3r-secret!" });
  const { events: own } = await events().listEvents({ aggregateId: userId });
  return String(own.find((e) => e.eventType === "user.notification.queued")?.payload?.outboxId);
}
/** Every event of the instance, page by page. */
async function allEvents() {
  const total = Number((await events().listEvents({ pageSize: 1 })).details?.totalResult ?? 0);
  const all: unknown[] = [];
  let pageToken = "";
  do {
    const page = await events().listEvents({ pageSize: 200, pageToken });
    all.push(...page.events);
    pageToken = page.details?.nextPageToken ?? "";
  } while (pageToken);
  expect(all.length).toBeGreaterThanOrEqual(total);
  return all;
}
const json = (value: unknown) => JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));
/** The database as stored: the SQLite file and its write-ahead log, byte for byte. */
function databaseBytes(): string {
  return readdirSync(t.server.dataDir)
    .filter((name) => name.startsWith("gatehouse.db"))
    .map((name) => readFileSync(join(t.server.dataDir, name)).toString("latin1"))
    .join("\n");
}
/** Asserts the password is readable nowhere the server keeps or shows what happened. */
async function expectNoLeakAnywhere() {
  const leaks = {
    events: passwordLeaks(json(await allEvents()), PASSWORD),
    log: passwordLeaks(t.server.logs.text, PASSWORD),
    database: passwordLeaks(databaseBytes(), PASSWORD),
  };
  expect(leaks).toEqual({ events: [], log: [], database: [] });
}

describe("a relay that echoes the login exchange", () => {
  it.each(["PLAIN", "LOGIN"] as const)("AUTH %s: the delivery worker stores and logs its reply without the password", async (method) => {
    const relay = await echoingRelay({ authMethods: [method] });
    await useRelay(relay);
    const outboxId = await queueMail();
    const retried = await waitForNotification(events(), outboxId, "notification.attempt.failed");
    const failed = await waitForNotification(events(), outboxId, "notification.failed");
    for (const event of [retried, failed]) {
      // The relay's words are kept (the operator needs them), the password is not.
      expect(String(event.payload?.error)).toMatch(/535 auth failed for/);
      expect(String(event.payload?.error)).toContain("[redacted]");
    }
    // This mail's own log line (earlier tests wrote theirs too), with the relay's words scrubbed.
    const logged = await eventually(() => t.server.logs.parsed().find((line) => line.msg === "mail delivery failed for good" && line.outboxId === outboxId), { what: `the "failed for good" log line of ${outboxId}` });
    expect(String(logged.error)).toContain("[redacted]");
    await expectNoLeakAnywhere();
  });

  it("the delivery worker stores the relay's accepting reply without the password", async () => {
    const relay = await echoingRelay({ auth: { user: USER, pass: PASSWORD }, acceptDataWith: (attempt) => `queued, ${attempt ? echoOfLogin(attempt) : "anonymous"}` });
    await useRelay(relay);
    const outboxId = await queueMail();
    const sent = await waitForNotification(events(), outboxId, "notification.sent");
    expect(String(sent.payload?.response)).toMatch(/^250 queued, auth failed for .*\[redacted\]/);
    await expectNoLeakAnywhere();
  });

  it("TestSmtpConfig of the saved configuration reports the rejected AUTH without the password", async () => {
    await useRelay(await echoingRelay());
    for (const protocol of ["connect-json-http1", "grpc-h2c", "grpc-web-http1"] as const) {
      const result = await smtp(protocol).testSmtpConfig({ receiverAddress: "probe@example.com" });
      expect(result.steps.at(-1)).toMatchObject({ step: "auth", ok: false, detail: expect.stringMatching(/535 auth failed for .*\[redacted\]/) });
      expect(passwordLeaks(json(result), PASSWORD), protocol).toEqual([]);
    }
    await expectNoLeakAnywhere();
  });

  it("TestSmtpConfig of an unsaved configuration scrubs the password given in the request, in AUTH and DATA replies", async () => {
    const rejecting = await echoingRelay({ authMethods: ["LOGIN"] });
    const accepting = await echoingRelay({ auth: { user: USER, pass: PASSWORD }, acceptDataWith: (attempt) => `queued, ${attempt ? echoOfLogin(attempt) : "anonymous"}` });
    const config = (relay: TestSmtpServer) => ({ senderAddress: "noreply@gatehouse.test", senderName: "Unsaved", tls: false, host: `127.0.0.1:${relay.port}`, user: USER });
    const rejected = await smtp().testSmtpConfig({ receiverAddress: "probe@example.com", config: config(rejecting), password: PASSWORD });
    expect(rejected.steps.at(-1)).toMatchObject({ step: "auth", ok: false, detail: expect.stringContaining("[redacted]") });
    const accepted = await smtp("grpc-h2c").testSmtpConfig({ receiverAddress: "probe@example.com", config: config(accepting), password: PASSWORD });
    expect(accepted.ok).toBe(true);
    expect(accepted.steps.at(-1)).toMatchObject({ step: "data", ok: true, detail: expect.stringMatching(/^250 queued, .*\[redacted\]/) });
    expect(passwordLeaks(json([rejected, accepted]), PASSWORD)).toEqual([]);
    await expectNoLeakAnywhere();
  });
});
