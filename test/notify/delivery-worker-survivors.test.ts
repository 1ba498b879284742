import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { SMTPServer } from "smtp-server";
import type { Deps } from "../../src/context.js";
import { createDeliveryWorker } from "../../src/notify/delivery-worker.js";
import { newOutboxRow } from "../../src/notify/outbox.js";
import type { OutboxRow, SmtpConfigRow } from "../../src/store/rows.js";
import type { Store } from "../../src/store/store.js";
import type { Commit } from "../../src/store/commit.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics } from "../../src/support/metrics.js";
import { eventually } from "../support/eventually.js";
import { LogCapture } from "../support/server.js";

/**
 * The delivery worker (README "Outgoing mail (SMTP)": a 5xx reply to the message itself fails it at once,
 * other failures are retried; event catalogue notification.*), in-process over a store that holds the
 * rows of the test, against real SMTP relays:
 * - a 5xx refusal of the message after its content (DATA) is as permanent as one of a recipient; a 4xx
 *   there is retried;
 * - what a relay says is stored bounded, however long its reply;
 * - stop() ends polling: once it has returned, no pass runs again and no timer is left behind.
 */
const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((close) => close())));
afterEach(() => {
  vi.useRealTimers();
});

const masterKey = randomBytes(32);
let n = 0;

/** A store holding `rows` (all due) and one SMTP configuration; it records every commit. */
function storeOf(rows: OutboxRow[], config: SmtpConfigRow | undefined) {
  const commits: Commit[] = [];
  let passes = 0;
  const store = {
    claimDueOutbox: async () => rows.filter((row) => !commits.some((c) => c.writes.some((w) => "id" in w && w.id === row.id))),
    // A pass begins by reading the instance (is there an SMTP configuration?): counted here.
    getInstance: async () => {
      passes++;
      return { id: "instance-1", name: "I", defaultOrgId: "org-1" };
    },
    getSmtpConfig: async () => config,
    commit: async (commit: Commit) => {
      commits.push(commit);
      return [];
    },
    durable: async () => {},
    releaseOutboxClaims: async () => {},
  } as unknown as Store;
  return { store, commits, passes: () => passes };
}
const depsOf = (store: Store): Deps => ({ store, clock: { now: () => new Date() }, masterKey, externalUrl: "https://iam.example.com" }) as unknown as Deps;
const worker = (store: Store, pollMs = 3_600_000) =>
  createDeliveryWorker(depsOf(store), createLogger("info", new LogCapture()), createMetrics(), { pollMs, maxAttempts: 10, retryBaseMs: 60_000, mailDir: "/nonexistent/mail", smtp: { timeoutMs: 2_000 } });

const queued = (recipient: string) =>
  newOutboxRow(masterKey, {
    id: `outbox-${++n}`,
    instanceId: "instance-1",
    userId: "user-1",
    template: "verification",
    recipient,
    mail: { subject: "Verify your email address", text: "Your code: XYZ789", html: "<p>XYZ789</p>" },
    at: new Date(),
  });
const configFor = (port: number): SmtpConfigRow => ({ instanceId: "instance-1", senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: false, host: `127.0.0.1:${port}`, user: "", passwordSealed: null });

/** A relay that refuses, per recipient, the message after its content ("data") or the recipient itself ("rcpt"). */
async function relay(answers: Record<string, { at: "data" | "rcpt"; code: number; text: string }>): Promise<number> {
  const refusal = (answer: { code: number; text: string }) => Object.assign(new Error(answer.text), { responseCode: answer.code });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    hideSTARTTLS: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      const answer = answers[address.address];
      callback(answer?.at === "rcpt" ? refusal(answer) : undefined);
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on("end", () => {
        const answer = answers[session.envelope.rcptTo[0]!.address];
        callback(answer?.at === "data" ? refusal(answer) : undefined);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
}
const outcome = (commits: Commit[], row: OutboxRow) => {
  const commit = commits.find((c) => c.writes.some((w) => "id" in w && w.id === row.id));
  return { write: commit?.writes[0], event: commit?.events[0] };
};

describe("a refusal of the message after its content (DATA)", () => {
  it("with a 5xx reply fails the mail at attempt 1; with a 4xx reply it is retried", async () => {
    const port = await relay({
      "spam@example.com": { at: "data", code: 554, text: "Message rejected as spam" },
      "busy@example.com": { at: "data", code: 451, text: "Try again later" },
    });
    const permanent = queued("spam@example.com");
    const transient = queued("busy@example.com");
    const { store, commits } = storeOf([permanent, transient], configFor(port));
    await worker(store).runOnce();
    expect(outcome(commits, permanent)).toMatchObject({
      write: { kind: "outbox.failed", attempts: 1 },
      event: { type: "notification.failed", payload: { attempt: 1, error: expect.stringContaining("554 Message rejected as spam") } },
    });
    expect(outcome(commits, transient)).toMatchObject({
      write: { kind: "outbox.retry", attempts: 1 },
      event: { type: "notification.attempt.failed", payload: { attempt: 1, error: expect.stringContaining("451 Try again later") } },
    });
  });
});

describe("what the relay said", () => {
  it("is stored cut to at most 500 characters, its beginning kept, however long the reply", async () => {
    const port = await relay({ "long@example.com": { at: "rcpt", code: 550, text: `Mailbox unavailable ${"because ".repeat(300)}` } });
    const row = queued("long@example.com");
    const { store, commits } = storeOf([row], configFor(port));
    await worker(store).runOnce();
    const { event } = outcome(commits, row);
    expect(event?.type).toBe("notification.failed");
    const error = String(event?.payload.error);
    expect(error).toContain("550 Mailbox unavailable because");
    expect(error.length).toBeLessThanOrEqual(500);
  });
});

describe("stop()", () => {
  it("ends polling: once it has returned, no pass runs again, however much time passes", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    // A running worker polls again every pollMs.
    const polling = storeOf([], undefined);
    const running = worker(polling.store, 1_000);
    running.start();
    expect(polling.passes()).toBe(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(polling.passes()).toBe(2);
    await running.stop();

    // One stopped during its pass: that pass ends, and no other follows.
    const stopping = storeOf([], undefined);
    const stopped = worker(stopping.store, 1_000);
    stopped.start();
    await stopped.stop();
    expect(stopping.passes()).toBe(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(stopping.passes()).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("a message committed but not yet durable (group commit)", () => {
  it("is not handed to the relay before it is durable", async () => {
    const port = await relay({ "wait@example.com": { at: "data", code: 554, text: "refused" } });
    const row = queued("wait@example.com");
    const { store, commits } = storeOf([row], configFor(port));
    let open = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    let asked = 0;
    (store as { durable: () => Promise<void> }).durable = () => {
      asked += 1;
      return opened;
    };
    const pass = worker(store).runOnce();
    await eventually(() => asked === 1, { what: "the worker to wait for durability" });
    expect(commits).toEqual([]);
    open();
    await pass;
    expect(outcome(commits, row).write).toMatchObject({ kind: "outbox.failed" });
  });
});
