import { boolean, integer, pgTable, text } from "drizzle-orm/pg-core";

/** The password complexity policy of an instance (absent: Gatehouse's default). */
export const passwordPolicies = pgTable("password_policies", {
  instanceId: text("instance_id").primaryKey(),
  minLength: integer("min_length").notNull(),
  requireUppercase: boolean("require_uppercase").notNull(),
  requireLowercase: boolean("require_lowercase").notNull(),
  requireDigit: boolean("require_digit").notNull(),
  requireSymbol: boolean("require_symbol").notNull(),
});
