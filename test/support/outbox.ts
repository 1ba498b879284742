import type { Client } from "@connectrpc/connect";
import type { Event, EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { openOutboxMessage } from "../../src/notify/outbox.js";
import type { RenderedMail } from "../../src/notify/templates.js";
import { eventually } from "./eventually.js";
import type { TestServer } from "./server.js";
import { insertionOrder, storedRows } from "./stored-rows.js";

export interface QueuedMail extends RenderedMail {
  template: string;
  recipient: string;
}

/** Mails queued in the server's outbox (delivery comes with the SMTP issue), opened with its master key. */
export async function queuedMails(server: TestServer): Promise<QueuedMail[]> {
  const { store, masterKey } = server.gatehouse.deps;
  const rows = await store.listOutbox({ limit: 10_000 });
  return rows.map((row) => ({ template: row.template, recipient: row.recipient, ...openOutboxMessage(masterKey, row) }));
}

/** The email verification code in a mail's text (the line after "Confirm your email address"). */
export function emailCodeIn(mail: RenderedMail): string | undefined {
  return /Confirm your email address with this code[^\n]*\n\s+([A-Z0-9]{6})\n/.exec(mail.text)?.[1];
}

/** The last mail sent to `recipient`. */
export async function lastMailTo(server: TestServer, recipient: string): Promise<QueuedMail | undefined> {
  return (await queuedMails(server)).filter((mail) => mail.recipient === recipient).at(-1);
}

export interface OutboxState {
  id: string;
  status: string;
  attempts: number;
}

/** The outbox rows for `recipient` in the order queued, read straight from the server's database (either engine). */
export async function outboxRowsTo(dataDir: string, recipient: string): Promise<OutboxState[]> {
  const server = { dataDir };
  return storedRows<OutboxState & Record<string, unknown>>(server, `select id, status, attempts from outbox where recipient = ? order by ${insertionOrder(server)}`, recipient);
}

/**
 * Polls (with a deadline) until the one outbox row for `recipient` satisfies `done`. Once a row left
 * `pending`, no delivery pass picks it up again, so counts of delivered mail taken after are final.
 */
export async function waitForOutbox(dataDir: string, recipient: string, done: (row: OutboxState) => boolean = (row) => row.status !== "pending", timeoutMs = 10_000): Promise<OutboxState> {
  return eventually(
    async () => {
      const row = (await outboxRowsTo(dataDir, recipient)).at(-1);
      return row && done(row) ? row : undefined;
    },
    { what: `the outbox row for ${recipient} to be as expected`, timeoutMs },
  );
}

type EventClient = Client<typeof EventService>;

/**
 * Waits (with a deadline) for the notification event of type `type` about the outbox row `outboxId`
 * that also satisfies `match` (e.g. a given attempt number), read through EventService.
 */
export function waitForNotification(events: EventClient, outboxId: string, type: string, match: (event: Event) => boolean = () => true, timeoutMs = 15_000): Promise<Event> {
  return eventually(
    async () => {
      const { events: trail } = await events.listEvents({ aggregateType: "notification", aggregateId: outboxId, pageSize: 1000 });
      return trail.find((event) => event.eventType === type && match(event));
    },
    { what: `a ${type} event for outbox row ${outboxId}`, timeoutMs },
  );
}
