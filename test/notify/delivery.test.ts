import { Code } from "@connectrpc/connect";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { Clients } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { startTestServer, TestClock, type TestServer } from "../support/server.js";
import { eventually } from "../support/eventually.js";
import { outboxRowsTo, waitForNotification, waitForOutbox } from "../support/outbox.js";
import { createActor } from "../support/world.js";
import { codeInRaw, makeTestCa, randomLoopbackAddress, startSmtpServer, type TestSmtpServer } from "../support/smtp.js";

// Port 465 means implicit TLS, so that test's relay listens on 465 of a loopback address of this run's own.
const implicitTlsHost = randomLoopbackAddress();
const ca = makeTestCa([implicitTlsHost]);
const mailConfig = { smtpCaFile: ca.caFile, smtpTimeoutMs: 2_000, pollMs: 50, maxAttempts: 6, retryBaseMs: 100 };
let server: TestServer;
let clients: Clients;
const smtpServers: TestSmtpServer[] = [];
let n = 0;

beforeAll(async () => {
  server = await startTestServer({ clock: new TestClock(new Date(), true), config: { mail: mailConfig } });
  clients = new Clients(server.url);
});
afterAll(async () => {
  clients.close();
  await server?.dispose();
  await Promise.all(smtpServers.map((s) => s.close()));
});

const admin = () => ({ token: server.adminToken });
const smtp = () => clients.client(SmtpService, "connect-json-http1", admin());
const users = () => clients.client(UserService, "connect-json-http1", admin());
async function smtpServer(options: Parameters<typeof startSmtpServer>[0]) {
  const started = await startSmtpServer(options);
  smtpServers.push(started);
  return started;
}
/** Points the instance's configuration at `host` (creating it the first time). */
async function useSmtp(settings: { host: string; tls?: boolean; user?: string; password?: string; senderName?: string }) {
  const config = { senderAddress: "noreply@gatehouse.test", senderName: settings.senderName ?? "Gatehouse Ünïcode", tls: settings.tls ?? false, host: settings.host, user: settings.user ?? "" };
  const exists = await smtp().getSmtpConfig({}).then(() => true, () => false);
  if (exists) await smtp().updateSmtpConfig(config);
  else await smtp().createSmtpConfig(config);
  if (settings.password) await smtp().setSmtpPassword({ password: settings.password });
}
async function createUnverifiedUser(email = `mail-${++n}@example.com`) {
  const { userId } = await users().createHumanUser({ userName: `mail-${++n}`, profile: { firstName: "Mai", lastName: "Ler" }, email: { email }, password: "Sup3r-secret!" });
  const { events: own } = await events().listEvents({ aggregateId: userId });
  const outboxId = String(own.find((e) => e.eventType === "user.notification.queued")?.payload?.outboxId);
  return { userId, email, outboxId };
}
const events = () => clients.client(EventService, "connect-json-http1", admin());

describe("mail delivery from the outbox", () => {
  it("without an SMTP configuration keeps mails pending and writes a readable .eml copy", async () => {
    // Its own server, on which no SMTP configuration was ever saved (the shared one gets one per test).
    const fresh = await startTestServer({ clock: new TestClock(new Date(), true), config: { mail: mailConfig } });
    const freshClients = new Clients(fresh.url);
    try {
      const email = "no-relay@example.com";
      await freshClients.client(UserService, "connect-json-http1", { token: fresh.adminToken }).createHumanUser({ userName: "no-relay", profile: { firstName: "No", lastName: "Relay" }, email: { email }, password: "Sup3r-secret!" });
      const mailDir = join(fresh.dataDir, "mail");
      const file = await eventually(() => readdirSafe(mailDir).find((name) => readFileSync(join(mailDir, name), "utf8").includes(`To: ${email}`)), { what: `an .eml copy of the mail to ${email}` });
      expect(codeInRaw(readFileSync(join(mailDir, file), "utf8"))).toMatch(/^[A-Z0-9]{6}$/);
      expect(await outboxRowsTo(fresh.dataDir, email)).toEqual([expect.objectContaining({ status: "pending", attempts: 0 })]);
    } finally {
      freshClients.close();
      await fresh.dispose();
    }
  });

  it("delivers the verification code end to end: the mail arrives and VerifyEmail accepts its code", async () => {
    const relay = await smtpServer({ tls: "none" });
    await useSmtp({ host: `127.0.0.1:${relay.port}` });
    const { userId, email } = await createUnverifiedUser();
    const mail = await relay.waitFor((m) => m.to.includes(email));
    expect(mail.raw).toMatch(/^From: =\?UTF-8\?[QB]\?.+\?= <noreply@gatehouse\.test>$/m);
    expect(mail.raw).toMatch(/^Date: /m);
    expect(mail.raw).toMatch(/^Message-ID: <[^>]+@gatehouse>$/m);
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    const code = codeInRaw(mail.raw);
    await users().verifyEmail({ userId, verificationCode: code! });
    const { user } = await users().getUser({ userId });
    expect(user?.type).toMatchObject({ case: "human", value: { email: { isEmailVerified: true } } });
  });

  it("uses a saved configuration for the very next mail (SPEC 4.2 rule 1)", async () => {
    const first = await smtpServer({ tls: "none" });
    const second = await smtpServer({ tls: "none" });
    await useSmtp({ host: `127.0.0.1:${first.port}` });
    const before = await createUnverifiedUser();
    await first.waitFor((m) => m.to.includes(before.email));
    await useSmtp({ host: `127.0.0.1:${second.port}` });
    const after = await createUnverifiedUser();
    await second.waitFor((m) => m.to.includes(after.email));
    expect(first.received.some((m) => m.to.includes(after.email))).toBe(false);
  });

  it("requires TLS when tls is true: STARTTLS with the test CA", async () => {
    const relay = await smtpServer({ tls: "starttls", certificate: ca });
    await useSmtp({ host: `localhost:${relay.port}`, tls: true });
    const { email } = await createUnverifiedUser();
    expect((await relay.waitFor((m) => m.to.includes(email))).secure).toBe(true);
  });

  it("requires TLS when tls is true: implicit TLS on port 465", async () => {
    const relay = await smtpServer({ tls: "implicit", certificate: ca, port: 465, host: implicitTlsHost });
    await useSmtp({ host: `${implicitTlsHost}:465`, tls: true });
    const { email } = await createUnverifiedUser();
    expect((await relay.waitFor((m) => m.to.includes(email))).secure).toBe(true);
  });

  it("never sends in clear when TLS is required but the server offers none, and retries until fixed", async () => {
    const relay = await smtpServer({ tls: "none" });
    await useSmtp({ host: `127.0.0.1:${relay.port}`, tls: true });
    const { email, outboxId } = await createUnverifiedUser();
    const attempt = await waitForNotification(events(), outboxId, "notification.attempt.failed");
    expect(String(attempt.payload?.error)).toMatch(/STARTTLS/);
    expect(relay.received.some((m) => m.to.includes(email))).toBe(false);
    await useSmtp({ host: `127.0.0.1:${relay.port}`, tls: false });
    await relay.waitFor((m) => m.to.includes(email));
  });

  it("authenticates with the saved password; a rejected password is retried until it is fixed", async () => {
    const relay = await smtpServer({ tls: "starttls", certificate: ca, auth: { user: "mailer", pass: "relay-pass-123" } });
    await useSmtp({ host: `localhost:${relay.port}`, tls: true, user: "mailer", password: "relay-pass-123" });
    const ok = await createUnverifiedUser();
    expect((await relay.waitFor((m) => m.to.includes(ok.email))).user).toBe("mailer");
    await smtp().setSmtpPassword({ password: "wrong-password" });
    const { email, outboxId } = await createUnverifiedUser();
    const attempt = await waitForNotification(events(), outboxId, "notification.attempt.failed");
    expect(String(attempt.payload?.error)).toMatch(/\b535 /);
    await smtp().setSmtpPassword({ password: "relay-pass-123" });
    await relay.waitFor((m) => m.to.includes(email));
  });

  it("gives up at once when the server rejects the message itself (5xx to RCPT TO)", async () => {
    const relay = await smtpServer({ tls: "none", rejectRecipients: ["gone@example.com"] });
    await useSmtp({ host: `127.0.0.1:${relay.port}` });
    const failedBefore = await failedDeliveries();
    const { outboxId } = await createUnverifiedUser("gone@example.com");
    const failed = await waitForNotification(events(), outboxId, "notification.failed");
    expect(failed.payload?.attempt).toBe(1);
    expect(String(failed.payload?.error)).toMatch(/550/);
    // Counted by this failure, not by whatever failed earlier on the shared server.
    await eventually(async () => (await failedDeliveries()) > failedBefore, { what: "the failed-delivery counter to count this failure", timeoutMs: 3_000 });
  });

  it("retries with backoff while the server is down and delivers exactly once when it is back", async () => {
    const probe = await startSmtpServer({ tls: "none" });
    const port = probe.port;
    await probe.close();
    await useSmtp({ host: `127.0.0.1:${port}` });
    const { email, outboxId } = await createUnverifiedUser();
    const first = await waitForNotification(events(), outboxId, "notification.attempt.failed", (e) => e.payload?.attempt === 1);
    const second = await waitForNotification(events(), outboxId, "notification.attempt.failed", (e) => e.payload?.attempt === 2);
    expect(Date.parse(String(second.payload?.nextAttemptAt))).toBeGreaterThan(Date.parse(String(first.payload?.nextAttemptAt)));
    const relay = await smtpServer({ tls: "none", port });
    // Marked sent, the row is never picked up again: the count below is final, no sleep needed.
    expect(await waitForOutbox(server.dataDir, email)).toMatchObject({ status: "sent" });
    expect(relay.received.filter((m) => m.to.includes(email))).toHaveLength(1);
  });
});

describe("restarts", () => {
  it("a message pending across a restart is delivered once", async () => {
    const probe = await startSmtpServer({ tls: "none" });
    const port = probe.port;
    await probe.close();
    const own = await startTestServer({ clock: new TestClock(new Date(), true), config: { mail: { ...mailConfig, retryBaseMs: 50 } } });
    const ownClients = new Clients(own.url);
    const token = { token: own.adminToken };
    await ownClients.client(SmtpService, "grpc-h2c", token).createSmtpConfig({ senderAddress: "a@gatehouse.test", senderName: "G", host: `127.0.0.1:${port}` });
    await ownClients.client(UserService, "grpc-h2c", token).createHumanUser({ userName: "restart", profile: { firstName: "R", lastName: "S" }, email: { email: "restart@example.com" } });
    // Pending across the restart for real: at least one attempt failed before the stop.
    expect(await waitForOutbox(own.dataDir, "restart@example.com", (row) => row.attempts >= 1)).toMatchObject({ status: "pending" });
    ownClients.close();
    await own.stop();

    const relay = await smtpServer({ tls: "none", port });
    const again = await startTestServer({ dataDir: own.dataDir, clock: new TestClock(new Date(), true), config: { mail: { ...mailConfig, retryBaseMs: 50 } } });
    try {
      expect(await waitForOutbox(again.dataDir, "restart@example.com")).toMatchObject({ status: "sent" });
      expect(relay.received.filter((m) => m.to.includes("restart@example.com"))).toHaveLength(1);
    } finally {
      await again.dispose();
    }
  });
});

describe("who may configure SMTP", () => {
  it("answers 404 before creation is done by IAM_OWNER only (403 for others)", async () => {
    const fresh = await startTestServer();
    const freshClients = new Clients(fresh.url);
    try {
      const client = freshClients.client(SmtpService, "connect-json-http1", { token: fresh.adminToken });
      const update = { senderAddress: "a@example.com", senderName: "A", host: "mail.example.com:587" };
      expect(await failure(client.updateSmtpConfig(update))).toMatchObject({ code: Code.NotFound, reason: "smtp.not_found" });
      const response = await fetch(`${fresh.url}/gatehouse.admin.v1.SmtpService/UpdateSmtpConfig`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${fresh.adminToken}` },
        body: JSON.stringify(update),
      });
      expect(response.status).toBe(404);
      const { defaultOrganizationId } = await freshClients.client(InstanceService, "connect-json-http1", { token: fresh.adminToken }).getInstance({});
      const orgOwner = await createActor(freshClients, fresh.adminToken, defaultOrganizationId, "org-owner-smtp-create", ["ORG_OWNER"]);
      const asOrgOwner = freshClients.client(SmtpService, "connect-json-http1", { token: orgOwner.token });
      expect(await failure(asOrgOwner.createSmtpConfig(update))).toMatchObject({ code: Code.PermissionDenied });
      expect(await failure(client.getSmtpConfig({}))).toMatchObject({ code: Code.NotFound, reason: "smtp.not_found" });
      await client.createSmtpConfig(update);
      expect((await client.getSmtpConfig({})).config?.host).toBe(update.host);
    } finally {
      freshClients.close();
      await fresh.dispose();
    }
  });
});

/** gatehouse_mail_deliveries_total{result="failed"} as the server reports it now. */
async function failedDeliveries(): Promise<number> {
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^gatehouse_mail_deliveries_total\{result="failed"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
