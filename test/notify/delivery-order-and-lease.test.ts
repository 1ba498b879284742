import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SMTPServer } from "smtp-server";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Deps } from "../../src/context.js";
import { createDeliveryWorker, type DeliverySettings } from "../../src/notify/delivery-worker.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics } from "../../src/support/metrics.js";
import { LogCapture, TestClock, useTestServer } from "../support/server.js";

/**
 * Review of the replica delivery work (a1b609c, a3289d8, 050f4bb, 072067a): the rules of README "Outgoing mail" /
 * Store.claimDueOutbox — a user's mails reach the relay in queue order, and a message is sent by the one worker that
 * holds it. Workers on the test server's store stand for replicas; the server's own worker polls once an hour.
 */
const t = useTestServer({ perTest: true, clock: new TestClock(), config: { mail: { smtpTimeoutMs: 2_000, pollMs: 3_600_000, maxAttempts: 10, retryBaseMs: 60_000 } } });
const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((close) => close())));

const admin = () => ({ token: t.server.adminToken });
const users = () => t.clients.client(UserService, "connect-json-http1", admin());
let n = 0;

function worker(deps: Deps, overrides: Partial<DeliverySettings> = {}) {
  const mailDir = join(mkdtempSync(join(tmpdir(), "gatehouse-review-claims-")), "mail");
  const settings = { pollMs: 3_600_000, maxAttempts: 10, retryBaseMs: 1_000, mailDir, smtp: { timeoutMs: 2_000 }, ...overrides };
  return createDeliveryWorker(deps, createLogger("info", new LogCapture()), createMetrics(), settings);
}

/** A relay that accepts everything and records the recipients in the order it accepted them; no SMTP config yet. */
async function relay(onData?: (recipient: string) => Promise<void>) {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    hideSTARTTLS: true,
    logger: false,
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
  const configure = () =>
    t.clients.client(SmtpService, "connect-json-http1", admin()).createSmtpConfig({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: false, host: `127.0.0.1:${port}`, user: "" });
  return { received, configure };
}

async function userMailedAt(email: string) {
  const { userId } = await users().createHumanUser({ userName: `review-claims-${++n}`, profile: { firstName: "Re", lastName: "View" }, email: { email }, password: "Sup3r-secret!" });
  return userId;
}

describe("a user's mails reach the relay in queue order", () => {
  // Was a bug, found in review (072067a, src/notify/delivery-worker.ts:180 and 188-193): `skipCopied` is decided once per pass, before the claim, but
  // the SMTP configuration is read again per message. An SMTP server configured while a pass runs (another replica, an
  // admin) makes the pass SMTP-send a user's NEWER mail that it claimed only because the older one was parked as
  // copied; the older one goes out on a later pass: the user gets them in the wrong order.
  it("an SMTP server configured during a pass that skipped a copied mail: the older mail still goes first", async () => {
    const { received, configure } = await relay();
    const older = `review-order-old-${++n}@example.com`;
    const newer = `review-order-new-${n}@example.com`;
    const store = t.server.gatehouse.deps.store;
    const plain = worker(t.server.gatehouse.deps);
    const userId = await userMailedAt(older);
    // No SMTP server: the older mail is copied to the mail dir and parked.
    await plain.runOnce();
    expect((await store.listOutboxOfUser(userId)).map((row) => row.copiedAt !== null)).toEqual([true]);
    await users().setEmail({ userId, email: newer });
    // The admin saves an SMTP configuration just after this pass decided it had none (and so claimed past the parked mail).
    const racing = worker({
      ...t.server.gatehouse.deps,
      store: {
        ...store,
        claimDueOutbox: async (claim) => {
          const rows = await store.claimDueOutbox(claim);
          await configure();
          return rows;
        },
      },
    });
    await racing.runOnce();
    await plain.runOnce();
    await plain.runOnce();
    expect(received).toEqual([older, newer]);
  });
});

describe("a message is sent by the one worker that holds it", () => {
  // Was a bug, found in review (a3289d8, src/notify/delivery-worker.ts:186-193 and 141-148): a pass sends every message of its claim without
  // checking that the claim is still its own. Once the lease has ended (one slow send of the batch: the lease counts
  // 3 SMTP timeouts per message, but socketTimeout is an idle timeout, so a relay answering each step just under it
  // makes one send take ~8 timeouts), another replica claims and sends the rest of the batch — and this worker sends
  // them AGAIN, even a mail the other has already recorded as sent. Not the documented "mail in the relay's hands
  // when the lease ended": these sends start after it.
  it("a worker does not start sending a claimed mail after its lease ended and another worker sent it", async () => {
    const a = worker(t.server.gatehouse.deps, { leaseMs: 1_000 });
    const b = worker(t.server.gatehouse.deps, { leaseMs: 1_000 });
    let first = true;
    const { received, configure } = await relay(async () => {
      if (!first) return;
      first = false;
      // A's first send is slow: its lease for the whole claim runs out meanwhile, and B takes over the claim.
      t.server.clock.advance(1_000);
      await b.runOnce();
    });
    await configure();
    const slow = `review-lease-slow-${++n}@example.com`;
    const later = `review-lease-later-${n}@example.com`;
    const laterUser = await userMailedAt(slow).then(() => userMailedAt(later));
    await a.runOnce();
    // B recorded the later mail sent before A got to it…
    expect((await t.server.gatehouse.deps.store.listOutboxOfUser(laterUser)).map((row) => row.status)).toEqual(["sent"]);
    // …and A, whose claim was no longer its own, must not have sent it again.
    expect(received.filter((to) => to === later)).toEqual([later]);
  });
});
