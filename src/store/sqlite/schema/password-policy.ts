import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The password complexity policy of an instance (absent: Gatehouse's default). */
export const passwordPolicies = sqliteTable("password_policies", {
  instanceId: text("instance_id").primaryKey(),
  minLength: integer("min_length").notNull(),
  requireUppercase: integer("require_uppercase", { mode: "boolean" }).notNull(),
  requireLowercase: integer("require_lowercase", { mode: "boolean" }).notNull(),
  requireDigit: integer("require_digit", { mode: "boolean" }).notNull(),
  requireSymbol: integer("require_symbol", { mode: "boolean" }).notNull(),
});
