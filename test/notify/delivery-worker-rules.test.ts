import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { SMTPServer } from "smtp-server";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Deps } from "../../src/context.js";
import { createDeliveryWorker, type DeliverySettings, SWEEP_BATCH } from "../../src/notify/delivery-worker.js";
import type { Store } from "../../src/store/store.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics, type Metrics } from "../../src/support/metrics.js";
import { eventually } from "../support/eventually.js";
import { LogCapture, TestClock, useTestServer } from "../support/server.js";
import { startSmtpServer } from "../support/smtp.js";

/**
 * The delivery worker (README "Outgoing mail (SMTP)", event catalogue notification.*), run
 * in-process pass by pass against the test server's own store and clock. The server's own worker
 * polls once an hour here, so only the worker under test delivers.
 */
const t = useTestServer({ perTest: true, clock: new TestClock(), config: { mail: { smtpTimeoutMs: 2_000, pollMs: 3_600_000, maxAttempts: 10, retryBaseMs: 60_000 } } });
const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((close) => close())));
afterEach(() => {
  vi.restoreAllMocks();
});

const admin = () => ({ token: t.server.adminToken });
const events = () => t.clients.client(EventService, "connect-json-http1", admin());
let n = 0;

interface Harness {
  worker: ReturnType<typeof createDeliveryWorker>;
  logs: LogCapture;
  metrics: Metrics;
  mailDir: string;
}
function harness(overrides: Partial<DeliverySettings> = {}, deps: Deps = t.server.gatehouse.deps): Harness {
  const logs = new LogCapture();
  const metrics = createMetrics();
  const mailDir = join(mkdtempSync(join(tmpdir(), "gatehouse-worker-")), "not", "yet", "mail");
  const worker = createDeliveryWorker(deps, createLogger("info", logs), metrics, {
    pollMs: 20,
    maxAttempts: 10,
    retryBaseMs: 1_000,
    mailDir,
    smtp: { timeoutMs: 2_000 },
    ...overrides,
  });
  return { worker, logs, metrics, mailDir };
}
async function useRelay(port: number) {
  await t.clients.client(SmtpService, "connect-json-http1", admin()).createSmtpConfig({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: false, host: `127.0.0.1:${port}`, user: "" });
}
/** Queues a verification mail to `email`; answers its outbox id. */
async function queueMail(email = `worker-${++n}@example.com`) {
  const { userId } = await t.clients.client(UserService, "connect-json-http1", admin()).createHumanUser({
    userName: `worker-${++n}`,
    profile: { firstName: "Wor", lastName: "Ker" },
    email: { email },
    password: "Sup3r-secret!",
  });
  const { events: own } = await events().listEvents({ aggregateId: userId });
  return String(own.find((e) => e.eventType === "user.notification.queued")?.payload?.outboxId);
}
async function trail(outboxId: string) {
  const { events: all } = await events().listEvents({ aggregateType: "notification", aggregateId: outboxId, pageSize: 1000 });
  return all.map((e) => ({ type: e.eventType, payload: e.payload ?? {} }));
}
async function row(outboxId: string) {
  return (await t.server.gatehouse.deps.store.listOutbox({ limit: 10_000 })).find((r) => r.id === outboxId);
}
async function counted(metrics: Metrics, result: string): Promise<number> {
  return (await metrics.mailDeliveries.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
}
/** A relay answering RCPT TO for each listed recipient with the given reply code (and accepting the rest). */
async function relayAnswering(codes: Record<string, number>, onData?: () => Promise<void>): Promise<{ port: number; received: string[] }> {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    hideSTARTTLS: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      const code = codes[address.address];
      if (code) callback(Object.assign(new Error(`reply ${code} for this recipient`), { responseCode: code }));
      else callback();
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on("end", () => {
        received.push(...session.envelope.rcptTo.map((r) => r.address));
        void (onData ?? (() => Promise.resolve()))().then(() => callback());
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { port: ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port, received };
}
async function closedPort(): Promise<number> {
  const probe = await startSmtpServer({ tls: "none" });
  await probe.close();
  return probe.port;
}

describe("only a 5xx reply to the message itself is permanent", () => {
  it("500 and 550 to RCPT TO fail the mail at attempt 1; 451 and a reply outside 5xx are retried", async () => {
    const relay = await relayAnswering({ "c500@example.com": 500, "c550@example.com": 550, "c451@example.com": 451, "c600@example.com": 600 });
    await useRelay(relay.port);
    const ids = { c500: await queueMail("c500@example.com"), c550: await queueMail("c550@example.com"), c451: await queueMail("c451@example.com"), c600: await queueMail("c600@example.com") };
    const { worker, metrics } = harness();
    await worker.runOnce();
    for (const permanent of [ids.c500, ids.c550]) {
      expect(await trail(permanent)).toEqual([expect.objectContaining({ type: "notification.failed", payload: expect.objectContaining({ attempt: 1 }) })]);
      expect(await row(permanent)).toMatchObject({ status: "failed", attempts: 1 });
    }
    for (const transient of [ids.c451, ids.c600]) {
      expect(await trail(transient)).toEqual([expect.objectContaining({ type: "notification.attempt.failed", payload: expect.objectContaining({ attempt: 1 }) })]);
      expect(await row(transient)).toMatchObject({ status: "pending", attempts: 1 });
    }
    expect(await counted(metrics, "failed")).toBe(2);
    expect(await counted(metrics, "retry")).toBe(2);
    expect(relay.received).toEqual([]);
  });
});

describe("retries back off exponentially, with jitter", () => {
  it("the delay doubles with every attempt, jittered between half and one and a half times it", async () => {
    await useRelay(await closedPort());
    const outboxId = await queueMail();
    const base = 1_000;
    const { worker, metrics, logs } = harness({ retryBaseMs: base });
    const random = vi.spyOn(Math, "random");
    const delays: number[] = [];
    for (const [attempt, jitter] of [[1, 0], [2, 0], [3, 0], [4, 0.999_999]] as const) {
      random.mockReturnValue(jitter);
      const now = t.server.clock.now().getTime();
      await worker.runOnce();
      const failed = (await trail(outboxId)).find((e) => e.type === "notification.attempt.failed" && e.payload.attempt === attempt);
      expect(failed, `attempt ${attempt}`).toBeDefined();
      const delay = Date.parse(String(failed?.payload.nextAttemptAt)) - now;
      delays.push(delay);
      const nominal = base * 2 ** (attempt - 1);
      expect(delay).toBeGreaterThanOrEqual(nominal / 2);
      expect(delay).toBeLessThanOrEqual(nominal * 1.5);
      // Due again once the delay has passed.
      t.server.clock.advance(delay);
    }
    // Without jitter (its lowest), each delay is twice the one before.
    expect(delays.slice(0, 3)).toEqual([base / 2, base, 2 * base]);
    expect(delays[3]).toBeGreaterThan(8 * base * 1.4);
    expect(await counted(metrics, "retry")).toBe(4);
    const retries = logs.parsed().filter((line) => line.outboxId === outboxId);
    expect(retries.map((line) => line.attempt)).toEqual([1, 2, 3, 4]);
    for (const line of retries) expect(String(line.msg).trim()).not.toBe("");
  });

  it("a retried mail is not attempted again before its nextAttemptAt", async () => {
    await useRelay(await closedPort());
    const outboxId = await queueMail();
    const { worker } = harness({ retryBaseMs: 10_000 });
    await worker.runOnce();
    await worker.runOnce();
    expect((await trail(outboxId)).map((e) => e.type)).toEqual(["notification.attempt.failed"]);
  });
});

describe("a delivered mail", () => {
  it("is recorded sent with its attempt, host and the relay's answer, and counted", async () => {
    const relay = await relayAnswering({});
    await useRelay(relay.port);
    const outboxId = await queueMail("delivered@example.com");
    const { worker, metrics } = harness();
    await worker.runOnce();
    expect(await trail(outboxId)).toEqual([
      expect.objectContaining({ type: "notification.sent", payload: expect.objectContaining({ attempt: 1, host: `127.0.0.1:${relay.port}`, response: expect.stringMatching(/^250 /) }) }),
    ]);
    expect(await counted(metrics, "sent")).toBe(1);
    expect(relay.received).toEqual(["delivered@example.com"]);
  });
});

describe("without an SMTP configuration", () => {
  it("a mail stays pending and is copied to the mail directory once, as a private, readable .eml", async () => {
    const outboxId = await queueMail("copied@example.com");
    const { worker, mailDir, logs } = harness();
    await worker.runOnce();
    await worker.runOnce();
    const files = readdirSync(mailDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`-${outboxId}\\.eml$`));
    expect(statSync(mailDir).mode & 0o777).toBe(0o700);
    const file = join(mailDir, files[0]!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const eml = readFileSync(file, "utf8");
    expect(eml).toMatch(/^To: copied@example\.com$/m);
    expect(eml).toMatch(new RegExp(`^From: Gatehouse <no-reply@${new URL(t.server.gatehouse.deps.externalUrl).hostname.replace(/\./g, "\\.")}>$`, "m"));
    expect(await trail(outboxId)).toEqual([expect.objectContaining({ type: "notification.copied", payload: expect.objectContaining({ file }) })]);
    expect(await row(outboxId)).toMatchObject({ status: "pending", attempts: 0 });
    // The log says where the copy is.
    const line = logs.parsed().find((l) => l.outboxId === outboxId);
    expect(line).toMatchObject({ file });
    expect(String(line?.msg).trim()).not.toBe("");
  });
});

describe("without an SMTP configuration, mails copied already", () => {
  it("stay parked: a newer mail gets its copy in the next pass, however many are parked", async () => {
    // Claims of two: three parked mails would fill every claim if a pass took them again.
    const { worker, mailDir } = harness({ claimBatch: 2 });
    for (let i = 0; i < 3; i++) await queueMail();
    await eventually(async () => (await worker.runOnce(), readdirSync(mailDir).length === 3), { what: "the three mails to be copied" });
    const newer = await queueMail();
    await worker.runOnce();
    expect(readdirSync(mailDir).filter((file) => file.endsWith(`-${newer}.eml`))).toHaveLength(1);
  });
});

describe("a claim whose lease ended while its worker was sending", () => {
  it("is the other worker's to record: the first records nothing, logs that it lost the claim, and the mail is sent once on record", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    let first = true;
    const relay = await relayAnswering({}, async () => {
      if (!first) return;
      first = false;
      holding = true;
      await released;
    });
    await useRelay(relay.port);
    const outboxId = await queueMail("taken-over@example.com");
    const slow = harness({ pollMs: 3_600_000, leaseMs: 60_000 });
    const sending = slow.worker.runOnce();
    await eventually(() => holding || undefined, { what: "the relay to be taking the mail from the first worker" });
    // The first worker's lease runs out while the relay holds its message: another worker claims and sends it.
    (t.server.gatehouse.deps.clock as TestClock).advance(60_001);
    const other = harness({ pollMs: 3_600_000, leaseMs: 60_000 });
    await other.worker.runOnce();
    expect(await row(outboxId)).toMatchObject({ status: "sent" });
    release();
    await sending;
    // The first worker's acceptance came too late to count: nothing of it is on record.
    expect((await trail(outboxId)).filter((e) => e.type === "notification.sent")).toHaveLength(1);
    expect(await counted(slow.metrics, "sent")).toBe(0);
    expect(await counted(other.metrics, "sent")).toBe(1);
    expect(slow.logs.parsed().find((line) => line.outboxId === outboxId)).toMatchObject({ outcome: "outbox.sent", msg: expect.stringContaining("taken over by another worker") });
  });
});

describe("stopping", () => {
  it("waits for the message being sent and starts no other", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const relay = await relayAnswering({}, async () => {
      holding = true;
      await released;
    });
    await useRelay(relay.port);
    const first = await queueMail("first@example.com");
    const second = await queueMail("second@example.com");
    const { worker } = harness({ pollMs: 3_600_000 });
    worker.start();
    await eventually(() => holding || undefined, { what: "the relay to be taking the first mail" });
    const stopped = worker.stop();
    release();
    await stopped;
    expect(await row(first)).toMatchObject({ status: "sent" });
    expect(await row(second)).toMatchObject({ status: "pending", attempts: 0 });
    expect(relay.received).toEqual(["first@example.com"]);
  });
});

describe("a pass that fails", () => {
  it("is logged with its error, and the worker keeps polling", async () => {
    const real = t.server.gatehouse.deps.store;
    let passes = 0;
    const store = new Proxy(real, {
      get(target, property, receiver) {
        if (property === "claimDueOutbox") {
          return () => {
            passes++;
            return Promise.reject(new Error("database is locked (test)"));
          };
        }
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as Store;
    const { worker, logs } = harness({ pollMs: 10 }, { ...t.server.gatehouse.deps, store });
    worker.start();
    try {
      await eventually(() => passes >= 2 || undefined, { what: "a second pass after the failed one" });
    } finally {
      await worker.stop();
    }
    const line = logs.parsed().find((l) => l.level === 50);
    expect(line).toMatchObject({ err: expect.objectContaining({ message: "database is locked (test)" }) });
    expect(String(line?.msg).trim()).not.toBe("");
  });
});

describe("the outbox's retention (README \"Outgoing mail\")", () => {
  const DAY = 86_400_000;
  it("a finished mail is deleted once it was queued longer ago than the retention; its events stay, a newer mail stays", async () => {
    const relay = await relayAnswering({ "gone-550@example.com": 550 });
    await useRelay(relay.port);
    const sent = await queueMail("kept-then-gone@example.com");
    const failed = await queueMail("gone-550@example.com");
    const { worker } = harness({ retentionMs: 2 * DAY });
    await worker.runOnce();
    expect(await row(sent)).toMatchObject({ status: "sent" });
    expect(await row(failed)).toMatchObject({ status: "failed" });
    (t.server.gatehouse.deps.clock as TestClock).advance(DAY);
    const newer = await queueMail("newer@example.com");
    await worker.runOnce();
    // Not yet past the retention: the sweep keeps them.
    expect(await worker.sweep()).toBe(false);
    expect(await row(sent)).toBeDefined();
    (t.server.gatehouse.deps.clock as TestClock).advance(DAY + 1);
    await worker.sweep();
    expect(await row(sent)).toBeUndefined();
    expect(await row(failed)).toBeUndefined();
    expect(await row(newer)).toMatchObject({ status: "sent" });
    expect((await trail(sent)).map((e) => e.type)).toEqual(["notification.sent"]);
    expect((await trail(failed)).map((e) => e.type)).toEqual(["notification.failed"]);
  });

  it("sweeps at most once a minute", async () => {
    const relay = await relayAnswering({});
    await useRelay(relay.port);
    const clock = t.server.gatehouse.deps.clock as TestClock;
    const { worker } = harness({ retentionMs: DAY });
    const first = await queueMail();
    await worker.runOnce();
    clock.advance(30_000);
    const second = await queueMail();
    await worker.runOnce();
    clock.advance(DAY - 30_000 + 1);
    await worker.sweep();
    expect(await row(first)).toBeUndefined();
    expect(await row(second)).toBeDefined();
    // 30 s later the second is past the retention too, but the last sweep was less than a minute ago.
    clock.advance(30_000);
    expect(await worker.sweep()).toBe(false);
    expect(await row(second)).toBeDefined();
    clock.advance(30_000);
    await worker.sweep();
    expect(await row(second)).toBeUndefined();
  });

  it("a full sweep (SWEEP_BATCH mails) is followed by another at once", async () => {
    const store = t.server.gatehouse.deps.store;
    const pruned: number[] = [];
    const counting = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== "pruneFinishedOutbox") return Reflect.get(target, property, receiver) as unknown;
        return async () => {
          pruned.push(Date.now());
          return pruned.length === 1 ? SWEEP_BATCH : 3;
        };
      },
    });
    const { worker } = harness({}, { ...t.server.gatehouse.deps, store: counting });
    expect(await worker.sweep()).toBe(true);
    expect(await worker.sweep()).toBe(false);
    expect(await worker.sweep()).toBe(false);
    expect(pruned).toHaveLength(2);
  });
});
