import { afterAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { lastSequence } from "../support/event-log.js";
import { waitForNotification } from "../support/outbox.js";
import { TestClock, useTestServer } from "../support/server.js";
import { makeTestCa, startSmtpServer, type SmtpServerOptions, type TestSmtpServer } from "../support/smtp.js";

/**
 * `tls: false` means TLS is not required, never that the password may travel in clear: turning TLS
 * off drops the stored password, STARTTLS is used (and verified) whenever the relay offers it, and
 * AUTH is never sent over an unencrypted connection.
 */
const PASSWORD = "S3cretPassw0rd!";
const USER = "mailer";
const trusted = makeTestCa();
/** A relay certificate from a CA the server does not trust (a self-signed relay, or a man in the middle). */
const untrusted = makeTestCa();
// Mail retries wait for real time, so the clock follows it.
const t = useTestServer({ clock: new TestClock(new Date(), true), config: { mail: { smtpCaFile: trusted.caFile, smtpTimeoutMs: 2_000, pollMs: 50, maxAttempts: 2, retryBaseMs: 50 } } });
const relays: TestSmtpServer[] = [];
let n = 0;
afterAll(() => Promise.all(relays.map((r) => r.close())));

const admin = () => ({ token: t.server.adminToken });
const smtp = (protocol: "connect-json-http1" | "grpc-h2c" = "connect-json-http1") => t.clients.client(SmtpService, protocol, admin());
const events = () => t.clients.client(EventService, "connect-json-http1", admin());
async function relay(options: Partial<SmtpServerOptions>) {
  const started = await startSmtpServer({ tls: "starttls", certificate: trusted, auth: { user: USER, pass: PASSWORD }, ...options });
  relays.push(started);
  return started;
}
const settings = (target: TestSmtpServer, tls: boolean, user = USER) => ({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls, host: `localhost:${target.port}`, user });
async function useSmtp(config: ReturnType<typeof settings>, password?: string) {
  const exists = await smtp().getSmtpConfig({}).then(() => true, () => false);
  const answer = exists ? await smtp().updateSmtpConfig(config) : (await smtp().createSmtpConfig({ ...config, password }), undefined);
  if (exists && password) await smtp().setSmtpPassword({ password });
  return answer;
}
/** Queues a verification mail; answers the recipient and the outbox id. */
async function queueMail() {
  const email = `cleartext-${++n}@example.com`;
  const { userId } = await t.clients.client(UserService, "connect-json-http1", admin()).createHumanUser({
    userName: `cleartext-${n}`,
    profile: { firstName: "Clear", lastName: "Text" },
    email: { email },
    password: "Sup3r-secret!",
  });
  const { events: own } = await events().listEvents({ aggregateId: userId });
  return { email, outboxId: String(own.find((e) => e.eventType === "user.notification.queued")?.payload?.outboxId) };
}
const steps = (result: { steps: { step: string; ok: boolean }[] }) => result.steps.map((s) => [s.step, s.ok]);

describe("turning required TLS off (the reported downgrade)", () => {
  it("drops the stored password, and the next test of the saved configuration sends no AUTH", async () => {
    const target = await relay({});
    await useSmtp(settings(target, true), PASSWORD);
    const since = await lastSequence(events());
    const update = await smtp().updateSmtpConfig(settings(target, false));
    expect(update.passwordDropped).toBe(true);
    expect((await smtp().getSmtpConfig({})).config?.hasPassword).toBe(false);
    // The one event of this update (not the last of a first page of earlier tests' events).
    const { events: trail } = await events().listEvents({ aggregateType: "smtp", fromSequence: since + 1n });
    expect(trail.map((e) => e.payload)).toEqual([expect.objectContaining({ tls: false, hasPassword: false, passwordDropped: true })]);
    const result = await smtp("grpc-h2c").testSmtpConfig({ receiverAddress: "probe@example.com" });
    expect(result.ok).toBe(false);
    expect(target.logins).toEqual([]);
  });

  it("turning TLS on keeps the password (the channel only gets stronger)", async () => {
    const target = await relay({});
    await useSmtp(settings(target, false), PASSWORD);
    const update = await smtp().updateSmtpConfig(settings(target, true));
    expect(update.passwordDropped).toBe(false);
    expect((await smtp().getSmtpConfig({})).config?.hasPassword).toBe(true);
  });
});

describe("tls: false uses STARTTLS when the relay offers it", () => {
  it("TestSmtpConfig upgrades with STARTTLS and logs in only over TLS", async () => {
    const target = await relay({});
    await useSmtp(settings(target, false), PASSWORD);
    const result = await smtp().testSmtpConfig({ receiverAddress: "probe@example.com" });
    expect(steps(result)).toEqual([
      ["connect", true], ["ehlo", true], ["tls", true], ["auth", true], ["mail_from", true], ["rcpt_to", true], ["data", true],
    ]);
    expect(result.tlsVersion).toMatch(/^TLSv1\.[23]$/);
    expect(target.logins).toEqual([{ method: "PLAIN", username: USER, secure: true }]);
  });

  it("the delivery worker sends over STARTTLS too, also without a user", async () => {
    const target = await relay({ auth: undefined });
    await useSmtp(settings(target, false, ""));
    const { email } = await queueMail();
    expect((await target.waitFor((m) => m.to.includes(email))).secure).toBe(true);
  });

  it("a relay certificate that does not verify fails the attempt; nothing is sent in clear instead", async () => {
    const target = await relay({ certificate: untrusted, auth: undefined });
    const result = await smtp().testSmtpConfig({ receiverAddress: "probe@example.com", config: settings(target, false, "") });
    expect(result.ok).toBe(false);
    expect(result.steps.at(-1)).toMatchObject({ step: "tls", ok: false, detail: expect.stringMatching(/certificate.*GATEHOUSE_SMTP_CA_FILE/) });
    await useSmtp(settings(target, false, ""));
    const { outboxId } = await queueMail();
    expect(String((await waitForNotification(events(), outboxId, "notification.attempt.failed")).payload?.error)).toMatch(/certificate/);
    expect(target.received).toEqual([]);
  });
});

describe("a relay without STARTTLS never sees the password", () => {
  it("TestSmtpConfig stops before AUTH and says why", async () => {
    const target = await relay({ tls: "none" });
    await useSmtp(settings(target, false), PASSWORD);
    const saved = await smtp().testSmtpConfig({ receiverAddress: "probe@example.com" });
    const unsaved = await smtp("grpc-h2c").testSmtpConfig({ receiverAddress: "probe@example.com", config: settings(target, false), password: PASSWORD });
    for (const result of [saved, unsaved]) {
      expect(result.ok).toBe(false);
      expect(steps(result)).toEqual([["connect", true], ["ehlo", true], ["tls", false]]);
      expect(result.steps.at(-1)?.detail).toMatch(/no STARTTLS.*only sent over TLS/);
    }
    expect(target.logins).toEqual([]);
    expect(target.received).toEqual([]);
  });

  it("the delivery worker fails the attempt instead of logging in over clear text", async () => {
    const target = await relay({ tls: "none" });
    await useSmtp(settings(target, false), PASSWORD);
    const { outboxId } = await queueMail();
    expect(String((await waitForNotification(events(), outboxId, "notification.attempt.failed")).payload?.error)).toMatch(/STARTTLS/);
    expect(target.logins).toEqual([]);
    expect(target.received).toEqual([]);
  });

  it("without a user, mail still goes to such a relay (TLS is not required)", async () => {
    const target = await relay({ tls: "none", auth: undefined });
    await useSmtp(settings(target, false, ""));
    const { email } = await queueMail();
    expect((await target.waitFor((m) => m.to.includes(email))).secure).toBe(false);
  });
});
