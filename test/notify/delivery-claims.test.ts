import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SMTPServer } from "smtp-server";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { createDeliveryWorker, type DeliverySettings } from "../../src/notify/delivery-worker.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics, type Metrics } from "../../src/support/metrics.js";
import { eventually } from "../support/eventually.js";
import { LogCapture, TestClock, useTestServer } from "../support/server.js";

/**
 * The delivery worker as one of several (README "Outgoing mail (SMTP)", Store.claimDueOutbox): it sends only what it
 * claimed, records an outcome only while the claim is still its own, keeps a user's mails in order within a pass,
 * and runs the next pass at once while a full claim made progress. Two workers on the test server's store stand for
 * two replicas; the server's own worker polls once an hour, so only the workers under test deliver.
 */
const t = useTestServer({ perTest: true, clock: new TestClock(), config: { mail: { smtpTimeoutMs: 2_000, pollMs: 3_600_000, maxAttempts: 10, retryBaseMs: 60_000 } } });
const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((close) => close())));

const admin = () => ({ token: t.server.adminToken });
const users = () => t.clients.client(UserService, "connect-json-http1", admin());
const events = () => t.clients.client(EventService, "connect-json-http1", admin());
let n = 0;

function worker(overrides: Partial<DeliverySettings> = {}) {
  const logs = new LogCapture();
  const metrics = createMetrics();
  const mailDir = join(mkdtempSync(join(tmpdir(), "gatehouse-claims-")), "mail");
  const settings = { pollMs: 3_600_000, maxAttempts: 10, retryBaseMs: 1_000, mailDir, smtp: { timeoutMs: 2_000 }, ...overrides };
  return { worker: createDeliveryWorker(t.server.gatehouse.deps, createLogger("info", logs), metrics, settings), logs, metrics };
}
async function counted(metrics: Metrics, result: string): Promise<number> {
  return (await metrics.mailDeliveries.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
}
/** A relay that answers RCPT TO with `codes[address]` (accepting the rest); `onData` runs before DATA is answered. */
async function relay(codes: Record<string, number>, onData?: (recipient: string) => Promise<void>) {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    hideSTARTTLS: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      const code = codes[address.address];
      callback(code ? Object.assign(new Error(`reply ${code}`), { responseCode: code }) : undefined);
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on("end", () => {
        const recipient = session.envelope.rcptTo[0]!.address;
        void (onData ?? (() => Promise.resolve()))(recipient).then(() => {
          received.push(recipient);
          callback();
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
  await t.clients.client(SmtpService, "connect-json-http1", admin()).createSmtpConfig({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: false, host: `127.0.0.1:${port}`, user: "" });
  return { received };
}
/** A new user whose initialization mail goes to `email`; answers its id. */
async function userMailedAt(email: string) {
  const { userId } = await users().createHumanUser({ userName: `claims-${++n}`, profile: { firstName: "Cla", lastName: "Ims" }, email: { email }, password: "Sup3r-secret!" });
  return userId;
}
async function notificationTypes() {
  const { events: all } = await events().listEvents({ aggregateType: "notification", pageSize: 1000 });
  return all.map((e) => e.eventType);
}

describe("a worker whose lease another worker took over", () => {
  it("records nothing for the message it was still sending: the one that took it over records it, once", async () => {
    const a = worker({ leaseMs: 1_000 });
    const b = worker({ leaseMs: 1_000 });
    let first = true;
    const { received } = await relay({}, async () => {
      if (!first) return;
      first = false;
      // A's lease runs out while the relay holds A's mail; B claims it and delivers it meanwhile.
      t.server.clock.advance(1_000);
      await b.worker.runOnce();
    });
    const email = `taken-over-${++n}@example.com`;
    await userMailedAt(email);
    await a.worker.runOnce();
    // The relay took it twice (at-least-once at the SMTP boundary), the outbox recorded it once, B's.
    expect(received).toEqual([email, email]);
    expect(await notificationTypes()).toEqual(["notification.sent"]);
    expect(await counted(b.metrics, "sent")).toBe(1);
    expect(await counted(a.metrics, "sent")).toBe(0);
    const line = a.logs.parsed().find((l) => l.level === 40);
    expect(line).toMatchObject({ outcome: "outbox.sent" });
    expect(String(line?.msg)).toMatch(/taken over/);
  });
});

describe("a user's mails within one pass", () => {
  it("a retried mail holds the user's newer one until it is delivered; then both go, oldest first", async () => {
    const codes: Record<string, number> = {};
    const { received } = await relay(codes);
    const firstAddress = `busy-${++n}@example.com`;
    const secondAddress = `next-${n}@example.com`;
    codes[firstAddress] = 451;
    const userId = await userMailedAt(firstAddress);
    await users().setEmail({ userId, email: secondAddress });
    const { worker: w } = worker({ retryBaseMs: 1_000 });
    await w.runOnce();
    expect(received).toEqual([]);
    const outbox = await t.server.gatehouse.deps.store.listOutboxOfUser(userId);
    expect(outbox.map((row) => ({ to: row.recipient, status: row.status, attempts: row.attempts }))).toEqual([
      { to: firstAddress, status: "pending", attempts: 1 },
      { to: secondAddress, status: "pending", attempts: 0 },
    ]);
    delete codes[firstAddress];
    t.server.clock.advance(2_000);
    await w.runOnce();
    expect(received).toEqual([firstAddress, secondAddress]);
  });
});

describe("stopping", () => {
  it("hands back the mails the worker claimed and did not get to: another worker sends them at once, not after the lease", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const { received } = await relay({}, async () => {
      holding = true;
      await released;
    });
    const emails = [`stop-${++n}@example.com`, `stop-${++n}@example.com`];
    for (const email of emails) await userMailedAt(email);
    const a = worker({ leaseMs: 3_600_000 });
    a.worker.start();
    await eventually(() => holding || undefined, { what: "the relay to be taking the first mail" });
    const stopped = a.worker.stop();
    release();
    await stopped;
    expect(received).toEqual([emails[0]]);
    // The second was A's for an hour; stopped, A gave it back, and B takes it now.
    const b = worker({ leaseMs: 3_600_000 });
    await b.worker.runOnce();
    expect(received).toEqual(emails);
  });
});

describe("passes", () => {
  it("a full claim that delivered something is followed by the next pass at once, not after the poll interval", async () => {
    const { received } = await relay({});
    const emails = [`full-${++n}@example.com`, `full-${++n}@example.com`, `full-${++n}@example.com`];
    for (const email of emails) await userMailedAt(email);
    const { worker: w } = worker({ claimBatch: 1, pollMs: 3_600_000 });
    w.start();
    try {
      await eventually(() => received.length === emails.length || undefined, { what: "all three mails, one claim at a time" });
    } finally {
      await w.stop();
    }
    expect(received).toEqual(emails);
  });
});
