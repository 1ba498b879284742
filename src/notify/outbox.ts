import type { OutboxRow } from "../store/rows.js";
import { openSecret, sealSecret } from "../support/secret-box.js";
import type { RenderedMail } from "./templates.js";

const context = (id: string) => `outbox:${id}:message`;

/**
 * A pending outbox row for a rendered mail to a user; the message (which carries codes) is sealed.
 * The row names its user, so removing the user removes (and the foreign key guarantees) its mails.
 */
export function newOutboxRow(masterKey: Buffer, input: { id: string; instanceId: string; userId: string; template: string; recipient: string; mail: RenderedMail; at: Date }): OutboxRow {
  return {
    id: input.id,
    userId: input.userId,
    instanceId: input.instanceId,
    template: input.template,
    recipient: input.recipient,
    messageSealed: sealSecret(masterKey, JSON.stringify(input.mail), context(input.id)),
    status: "pending",
    attempts: 0,
    nextAttemptAt: input.at.getTime(),
    createdAt: input.at.getTime(),
    copiedAt: null,
  };
}

/** The rendered mail of an outbox row. */
export function openOutboxMessage(masterKey: Buffer, row: OutboxRow): RenderedMail {
  return JSON.parse(openSecret(masterKey, row.messageSealed, context(row.id))) as RenderedMail;
}
