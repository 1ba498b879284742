import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The instance's one SMTP configuration. Read at send time by the delivery worker. */
export const smtpConfigs = sqliteTable("smtp_configs", {
  instanceId: text("instance_id").primaryKey(),
  senderAddress: text("sender_address").notNull(),
  senderName: text("sender_name").notNull(),
  tls: integer("tls", { mode: "boolean" }).notNull(),
  host: text("host").notNull(),
  user: text("user").notNull(),
  /** Sealed under the master key, bound to the instance; null when no password is set. */
  passwordSealed: text("password_sealed"),
});
