import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { users } from "./user.js";

/** Pending one-time codes; one per user and kind (a new one replaces the old). Only digests are stored. */
export const oneTimeCodes = sqliteTable(
  "one_time_codes",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["init", "email", "passwordless"] }).notNull(),
    digest: text("digest").notNull(),
    expiresAt: integer("expires_at").notNull(),
    attempts: integer("attempts").notNull(),
    usedAt: integer("used_at"),
    /** Lower-cased address the code was mailed to (an init code: the initialization mail); null when not mailed. */
    emailKey: text("email_key"),
  },
  (table) => [uniqueIndex("one_time_codes_user_kind").on(table.userId, table.kind)],
);
