import { openOutboxMessage } from "../../src/notify/outbox.js";
import type { RenderedMail } from "../../src/notify/templates.js";
import type { TestServer } from "./server.js";

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
