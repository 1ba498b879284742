import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The lockout policy of an instance (absent: Gatehouse's default, src/domain/lockout-policy.ts). */
export const lockoutPolicies = sqliteTable("lockout_policies", {
  instanceId: text("instance_id").primaryKey(),
  /** Wrong passwords in a row that lock the user; 0: never locked for wrong passwords. */
  maxPasswordAttempts: integer("max_password_attempts").notNull(),
});
