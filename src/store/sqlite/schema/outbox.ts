import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./user.js";

/**
 * Mails waiting to be delivered, written in the same transaction as the change that causes them.
 * The rendered message carries codes, so it is sealed under the master key.
 */
export const outbox = sqliteTable(
  "outbox",
  {
    id: text("id").primaryKey(),
    instanceId: text("instance_id").notNull(),
    /** What the mail is, e.g. `user.initialization`, `user.email_verification`. */
    template: text("template").notNull(),
    recipient: text("recipient").notNull(),
    /** The user the mail is for, so RemoveUser can take its mails with it; null for mails to no user. */
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    /** JSON {subject, text, html}, sealed. */
    messageSealed: text("message_sealed").notNull(),
    status: text("status", { enum: ["pending", "sent", "failed"] }).notNull(),
    attempts: integer("attempts").notNull(),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    createdAt: integer("created_at").notNull(),
    /** Set once a copy was written to the data directory's mail/ folder (no SMTP configured). */
    copiedAt: integer("copied_at"),
    /** The delivery worker that claimed the message (Store.claimDueOutbox); another may claim it after `claimedUntil`. */
    claimedBy: text("claimed_by"),
    claimedUntil: integer("claimed_until"),
  },
  (table) => [
    index("outbox_due").on(table.status, table.nextAttemptAt),
    index("outbox_user").on(table.userId),
    // The retention sweep (Store.pruneFinishedOutbox): finished mails, oldest first.
    index("outbox_finished").on(table.status, table.createdAt),
  ],
);
