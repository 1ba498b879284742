import { boolean, pgTable, text } from "drizzle-orm/pg-core";

/** The instance's one SMTP configuration (its key, smtp_configs_pkey, keeps it one). Read at send time. */
export const smtpConfigs = pgTable("smtp_configs", {
  instanceId: text("instance_id").primaryKey(),
  senderAddress: text("sender_address").notNull(),
  senderName: text("sender_name").notNull(),
  tls: boolean("tls").notNull(),
  host: text("host").notNull(),
  user: text("user").notNull(),
  /** Sealed under the master key, bound to the instance; null when no password is set. */
  passwordSealed: text("password_sealed"),
});
