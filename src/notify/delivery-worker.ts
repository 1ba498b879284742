import { randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Deps } from "../context.js";
import { DomainError } from "../domain/errors.js";
import { EventType } from "../events/types.js";
import { smtpPasswordContext } from "../domain/smtp.js";
import { SYSTEM_ACTOR } from "../events/event.js";
import type { OutboxRow, SmtpConfigRow } from "../store/rows.js";
import type { RowWrite } from "../store/commit.js";
import type { Logger } from "../support/logger.js";
import type { Metrics } from "../support/metrics.js";
import { openSecret } from "../support/secret-box.js";
import { openOutboxMessage } from "./outbox.js";
import { type OutgoingMail, renderEml, sendMail, type SmtpClientOptions } from "./smtp-transport.js";

export interface DeliverySettings {
  pollMs: number;
  maxAttempts: number;
  /** First retry delay; doubles with every attempt, with jitter, up to an hour. */
  retryBaseMs: number;
  /** Where copies go while no SMTP server is configured. */
  mailDir: string;
  smtp: SmtpClientOptions;
  /** How many messages one pass claims (default CLAIM_BATCH). */
  claimBatch?: number;
  /** How long a claim holds them (default: `leaseFor(claimBatch, smtp.timeoutMs)`). */
  leaseMs?: number;
  /** How long a finished (sent or failed) mail stays in the outbox; the sweep deletes older ones. Default 7 days. */
  retentionMs?: number;
}

/** The retention sweep runs at most this often, deleting at most SWEEP_BATCH mails at a time (bounded work per pass). */
export const SWEEP_EVERY_MS = 60_000;
export const SWEEP_BATCH = 500;
const DEFAULT_RETENTION_MS = 7 * 86_400_000;

/** Messages one pass claims: few, so the lease that must cover sending all of them stays short. */
export const CLAIM_BATCH = 5;

/**
 * The lease of a claim of `batch` messages: each send is bounded by the SMTP client's timeouts (connecting, the
 * greeting, then the relay's silence at any one step: three timeouts for a relay that stalls once), plus 2 s for the
 * records. A worker killed mid-send leaves its messages to another once it has passed (at the default 10 s SMTP timeout
 * and 5 messages, 152 s); a live worker whose lease ran out (a relay that trickles) may see its message sent again by
 * another, and its own outcome is then refused (at-least-once at the SMTP boundary).
 */
export const leaseFor = (batch: number, smtpTimeoutMs: number) => batch * 3 * smtpTimeoutMs + 2_000;

/** What became of one claimed message in a pass. */
type Outcome = "sent" | "failed" | "retry" | "copied" | "lost";

/**
 * Only a 5xx reply to the message itself (MAIL FROM, RCPT TO, DATA) is permanent: this server will
 * never take this message. Connection, TLS and AUTH failures are problems of the configuration,
 * which an operator can fix, so they are retried like outages.
 */
const isPermanent = (error: unknown) => {
  const { responseCode, code } = error as { responseCode?: number; code?: string };
  // Stryker disable next-line ConditionalExpression: relayError keeps only a numeric reply code, and neither comparison below holds for undefined
  if (typeof responseCode !== "number") return false;
  const aboutTheMessage = code === "EENVELOPE" || code === "EMESSAGE";
  return aboutTheMessage && responseCode >= 500 && responseCode < 600;
};

/** The error's text, already scrubbed of the password by sendMail (the SMTP client's boundary). */
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

/**
 * Delivers outbox messages in order. It reads the SMTP configuration for EVERY message, so a saved
 * change is used by the very next one (SPEC 4.2). Each attempt is an event; transient failures are
 * retried with exponential backoff and jitter, permanent ones and the last attempt mark the message
 * failed. A message is marked sent right after the server accepted it, so it is not sent again.
 * If that record fails, the acceptance is remembered and only the record is retried: a store
 * failure is not a failed delivery. (A crash in that window loses the memory: at-least-once.)
 *
 * Several replicas may run a worker on one database: each pass CLAIMS its messages first (`Store.claimDueOutbox`, a
 * lease under this worker's own id), so each message is sent by the one worker that holds it, and a worker killed
 * mid-send leaves it to another once the lease has passed. Every outcome is recorded only while the claim is still
 * this worker's (`owner` on the write): a worker whose lease another took over records nothing. Per user, in order: a
 * claim takes a user's messages only with every older pending one, and once one of them is not delivered in a pass
 * (retried later, or taken over) the user's newer ones wait for the next pass.
 */
export function createDeliveryWorker(deps: Deps, logger: Logger, metrics: Metrics, settings: DeliverySettings) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  /** This worker, as the owner of its claims: one per process, never reused. */
  const owner = randomUUID();
  const claimBatch = settings.claimBatch ?? CLAIM_BATCH;
  const leaseMs = settings.leaseMs ?? leaseFor(claimBatch, settings.smtp.timeoutMs);
  /** Mails the SMTP server accepted whose `sent` record has not committed yet, by outbox id. */
  const acceptedUnrecorded = new Map<string, { attempt: number; host: string; response: string }>();

  const record = (row: OutboxRow, writes: RowWrite[], type: string, payload: Record<string, unknown>) =>
    deps.store.commit({
      instanceId: row.instanceId,
      actor: SYSTEM_ACTOR,
      at: deps.clock.now(),
      writes,
      events: [{ aggregateType: "notification", aggregateId: row.id, type, payload: { template: row.template, ...payload }, resourceOwner: row.instanceId }],
    });

  /**
   * Records an outcome of a message this worker claimed: false (nothing written) when the claim is no longer its own —
   * its lease ended and another worker took the message over, which now decides and records it.
   */
  async function recordClaimed(row: OutboxRow, write: Extract<RowWrite, { kind: "outbox.sent" | "outbox.retry" | "outbox.failed" }>, type: string, payload: Record<string, unknown>) {
    try {
      await record(row, [{ ...write, owner }], type, payload);
      return true;
    } catch (error) {
      if (!(error instanceof DomainError && error.reason === "store.condition_failed")) throw error;
      acceptedUnrecorded.delete(row.id);
      logger.warn({ outboxId: row.id, outcome: write.kind }, "mail's claim was taken over by another worker after its lease ended: its outcome is left to that worker");
      return false;
    }
  }

  const outgoing = (row: OutboxRow, from: OutgoingMail["from"]): OutgoingMail => ({
    messageId: `<${row.id}@gatehouse>`,
    from,
    to: row.recipient,
    date: new Date(row.createdAt),
    mail: openOutboxMessage(deps.masterKey, row),
  });

  /** No SMTP server: keep the message pending, and leave a readable copy once. */
  async function copyToMailDir(row: OutboxRow): Promise<Outcome> {
    // Stryker disable next-line ConditionalExpression: reached only when the SMTP configuration goes away during a pass (without one, copied messages are not claimed); the harm it keeps away is a second copy
    if (row.copiedAt !== null) return "copied";
    const from = { name: "Gatehouse", address: `no-reply@${new URL(deps.externalUrl).hostname}` };
    mkdirSync(settings.mailDir, { recursive: true, mode: 0o700 });
    const file = join(settings.mailDir, `${new Date(row.createdAt).toISOString().replace(/[:.]/g, "-")}-${row.id}.eml`);
    writeFileSync(file, await renderEml(outgoing(row, from)), { mode: 0o600 });
    await record(row, [{ kind: "outbox.copied", id: row.id, at: deps.clock.now().getTime() }], EventType.notificationCopied, { file });
    logger.info({ outboxId: row.id, file }, "no SMTP configuration: mail copied to the data directory and kept pending");
    return "copied";
  }

  /** Throws when the commit fails; the acceptance stays remembered so the next pass records it without sending. */
  async function recordSent(row: OutboxRow, accepted: { attempt: number; host: string; response: string }): Promise<Outcome> {
    // Stryker disable next-line StringLiteral: a lost claim means the lease ended, and the pass stops at its next message whatever the outcome's name
    if (!(await recordClaimed(row, { kind: "outbox.sent", id: row.id, attempts: accepted.attempt }, EventType.notificationSent, accepted))) return "lost";
    acceptedUnrecorded.delete(row.id);
    metrics.mailDeliveries.inc({ result: "sent" });
    // Stryker disable next-line StringLiteral: a pass tells only "retry", "lost" and "copied" apart; any other label acts as "sent" does
    return "sent";
  }

  async function deliver(row: OutboxRow, config: SmtpConfigRow): Promise<Outcome> {
    const unrecorded = acceptedUnrecorded.get(row.id);
    if (unrecorded) return recordSent(row, unrecorded);
    const attempt = row.attempts + 1;
    const password = config.passwordSealed ? openSecret(deps.masterKey, config.passwordSealed, smtpPasswordContext(config.instanceId)) : undefined;
    let response: string;
    try {
      response = (await sendMail(config, password, settings.smtp, outgoing(row, { name: config.senderName, address: config.senderAddress }))).response;
    } catch (error) {
      const reason = describe(error);
      if (isPermanent(error) || attempt >= settings.maxAttempts) {
        const failed = { kind: "outbox.failed", id: row.id, attempts: attempt } as const;
        if (!(await recordClaimed(row, failed, EventType.notificationFailed, { attempt, host: config.host, error: reason }))) return "lost";
        metrics.mailDeliveries.inc({ result: "failed" });
        logger.warn({ outboxId: row.id, attempt, error: reason }, "mail delivery failed for good");
        // Stryker disable next-line StringLiteral: as "sent": a mail that failed for good holds back nothing after it
        return "failed";
      }
      const delay = Math.min(3_600_000, settings.retryBaseMs * 2 ** (attempt - 1)) * (0.5 + Math.random());
      const nextAttemptAt = deps.clock.now().getTime() + Math.round(delay);
      const retry = { kind: "outbox.retry", id: row.id, attempts: attempt, nextAttemptAt } as const;
      const payload = { attempt, host: config.host, error: reason, nextAttemptAt: new Date(nextAttemptAt).toISOString() };
      if (!(await recordClaimed(row, retry, EventType.notificationAttemptFailed, payload))) return "lost";
      metrics.mailDeliveries.inc({ result: "retry" });
      logger.info({ outboxId: row.id, attempt, error: reason, retryInMs: Math.round(delay) }, "mail delivery failed; will retry");
      return "retry";
    }
    const accepted = { attempt, host: config.host, response };
    acceptedUnrecorded.set(row.id, accepted);
    return recordSent(row, accepted);
  }

  /**
   * One pass: claims due messages and delivers them, oldest first. Answers whether another pass should follow at once
   * (the claim was full and something was delivered or recorded: more may be waiting).
   */
  async function runOnce(): Promise<boolean> {
    // The pass decides once whether there is an SMTP server. Without one, messages copied already stay parked (claiming
    // them again each pass would fill every claim, and a newer message would never get its copy); and a server
    // configured during the pass waits for the next one (sending now could pass a user's older, parked message).
    const instance = await deps.store.getInstance();
    // Stryker disable next-line ConditionalExpression: no instance only before the bootstrap committed (a replica starting beside the one that bootstraps), when there is no message to claim either
    const serverAtStart = instance !== undefined && (await deps.store.getSmtpConfig(instance.id)) !== undefined;
    const claimedAt = deps.clock.now().getTime();
    const claimed = await deps.store.claimDueOutbox({ now: claimedAt, limit: claimBatch, leaseMs, owner, skipCopied: !serverAtStart });
    /** Users one of whose messages was not delivered in this pass: their newer messages wait (order per user). */
    const waiting = new Set<string>();
    // Stryker disable next-line BooleanLiteral: what counts as progress decides only whether a full claim's next pass starts at once or after the poll interval (see below)
    let progressed = false;
    for (const row of claimed) {
      // Stryker disable next-line BooleanLiteral: a stopped worker schedules no pass, whatever this answers
      if (stopped) return false;
      // Past the lease, the rest of the claim may be another worker's now: no send starts after it. (Leases are measured
      // on each replica's own clock: replicas' clocks must agree to well within a lease.)
      if (deps.clock.now().getTime() >= claimedAt + leaseMs) break;
      if (row.userId && waiting.has(row.userId)) continue;
      const config = serverAtStart ? await deps.store.getSmtpConfig(row.instanceId) : undefined;
      // The message and the configuration it goes out with may be committed but not yet durable (group commit):
      // nothing is sent or copied before they are.
      await deps.store.durable();
      // Stryker disable next-line all: a message copied before is claimed only when the SMTP configuration went away during the pass; it then only keeps the next pass from starting at once
      const copiedBefore = row.copiedAt !== null;
      const outcome = config ? await deliver(row, config) : await copyToMailDir(row);
      if (outcome === "retry" && row.userId) waiting.add(row.userId);
      // Stryker disable next-line ConditionalExpression,StringLiteral: "lost" means the lease ended, so the pass stops at the next message anyway; this only guards against replicas' clocks that disagree by more than a lease
      if (outcome === "lost" && row.userId) waiting.add(row.userId);
      // Stryker disable next-line all: a lost or re-copied message counting as progress costs one more pass at once, which claims what is left (or nothing)
      if (outcome !== "lost" && !(outcome === "copied" && copiedBefore)) progressed = true;
    }
    return claimed.length === claimBatch && progressed;
  }

  let lastSweep = Number.NEGATIVE_INFINITY;
  /**
   * The outbox's retention: deletes finished mails queued longer ago than the retention, at most SWEEP_BATCH, at most
   * once a SWEEP_EVERY_MS — unless the last sweep was full (more are waiting): then at once. Answers whether it was full.
   */
  async function sweep(): Promise<boolean> {
    const now = deps.clock.now().getTime();
    if (now - lastSweep < SWEEP_EVERY_MS) return false;
    const deleted = await deps.store.pruneFinishedOutbox({ queuedBefore: now - (settings.retentionMs ?? DEFAULT_RETENTION_MS), limit: SWEEP_BATCH });
    const full = deleted === SWEEP_BATCH;
    lastSweep = full ? Number.NEGATIVE_INFINITY : now;
    return full;
  }

  const schedule = (more: boolean) => {
    if (!stopped) timer = setTimeout(tick, more ? 0 : settings.pollMs);
  };
  const tick = () => {
    let more = false;
    running = runOnce()
      .then(async (again) => {
        more = again;
        if (!stopped) more = (await sweep()) || more;
      })
      .catch((error: unknown) => logger.error({ err: error }, "delivery pass failed"))
      .finally(() => schedule(more));
  };

  return {
    start() {
      stopped = false;
      tick();
    },
    /**
     * Stops polling and waits for the message being sent, so nothing is cut mid-delivery; then hands back what this
     * worker claimed and did not get to, so another replica need not wait for the lease to end.
     */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      // Stryker disable next-line StringLiteral: the wording of a warning line
      await deps.store.releaseOutboxClaims(owner).catch((error: unknown) => logger.warn({ err: error }, "could not release the mails this worker claimed; they wait for their lease to end"));
    },
    runOnce,
    sweep,
  };
}
