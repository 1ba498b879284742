import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Deps } from "../context.js";
import { EventType } from "../events/types.js";
import { smtpPasswordContext } from "../domain/smtp.js";
import { SYSTEM_ACTOR } from "../events/event.js";
import type { OutboxRow, SmtpConfigRow } from "../store/rows.js";
import type { RowWrite } from "../store/store.js";
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
}

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
 */
export function createDeliveryWorker(deps: Deps, logger: Logger, metrics: Metrics, settings: DeliverySettings) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
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

  const outgoing = (row: OutboxRow, from: OutgoingMail["from"]): OutgoingMail => ({
    messageId: `<${row.id}@gatehouse>`,
    from,
    to: row.recipient,
    date: new Date(row.createdAt),
    mail: openOutboxMessage(deps.masterKey, row),
  });

  /** No SMTP server: keep the message pending, and leave a readable copy once. */
  async function copyToMailDir(row: OutboxRow) {
    if (row.copiedAt !== null) return;
    const from = { name: "Gatehouse", address: `no-reply@${new URL(deps.externalUrl).hostname}` };
    mkdirSync(settings.mailDir, { recursive: true, mode: 0o700 });
    const file = join(settings.mailDir, `${new Date(row.createdAt).toISOString().replace(/[:.]/g, "-")}-${row.id}.eml`);
    writeFileSync(file, await renderEml(outgoing(row, from)), { mode: 0o600 });
    await record(row, [{ kind: "outbox.copied", id: row.id, at: deps.clock.now().getTime() }], EventType.notificationCopied, { file });
    logger.info({ outboxId: row.id, file }, "no SMTP configuration: mail copied to the data directory and kept pending");
  }

  /** Throws when the commit fails; the acceptance stays remembered so the next pass records it without sending. */
  async function recordSent(row: OutboxRow, accepted: { attempt: number; host: string; response: string }) {
    await record(row, [{ kind: "outbox.sent", id: row.id, attempts: accepted.attempt }], EventType.notificationSent, accepted);
    acceptedUnrecorded.delete(row.id);
    metrics.mailDeliveries.inc({ result: "sent" });
  }

  async function deliver(row: OutboxRow, config: SmtpConfigRow) {
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
        await record(row, [{ kind: "outbox.failed", id: row.id, attempts: attempt }], EventType.notificationFailed, { attempt, host: config.host, error: reason });
        metrics.mailDeliveries.inc({ result: "failed" });
        logger.warn({ outboxId: row.id, attempt, error: reason }, "mail delivery failed for good");
        return;
      }
      const delay = Math.min(3_600_000, settings.retryBaseMs * 2 ** (attempt - 1)) * (0.5 + Math.random());
      const nextAttemptAt = deps.clock.now().getTime() + Math.round(delay);
      await record(row, [{ kind: "outbox.retry", id: row.id, attempts: attempt, nextAttemptAt }], EventType.notificationAttemptFailed, {
        attempt,
        host: config.host,
        error: reason,
        nextAttemptAt: new Date(nextAttemptAt).toISOString(),
      });
      metrics.mailDeliveries.inc({ result: "retry" });
      logger.info({ outboxId: row.id, attempt, error: reason, retryInMs: Math.round(delay) }, "mail delivery failed; will retry");
      return;
    }
    const accepted = { attempt, host: config.host, response };
    acceptedUnrecorded.set(row.id, accepted);
    await recordSent(row, accepted);
  }

  /** One pass over the due messages, in order. */
  async function runOnce(): Promise<void> {
    const due = await deps.store.listDueOutbox(deps.clock.now().getTime(), 20);
    for (const row of due) {
      if (stopped) return;
      const config = await deps.store.getSmtpConfig(row.instanceId);
      // The message and the configuration it goes out with may be committed but not yet durable (group commit):
      // nothing is sent or copied before they are.
      await deps.store.durable();
      if (config) await deliver(row, config);
      else await copyToMailDir(row);
    }
  }

  const schedule = () => {
    if (!stopped) timer = setTimeout(tick, settings.pollMs);
  };
  const tick = () => {
    running = runOnce()
      .catch((error: unknown) => logger.error({ err: error }, "delivery pass failed"))
      .finally(schedule);
  };

  return {
    start() {
      stopped = false;
      tick();
    },
    /** Stops polling and waits for the message being sent, so nothing is cut mid-delivery. */
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    runOnce,
  };
}
