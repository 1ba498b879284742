import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./user.js";

/** Personal access tokens. Only a SHA-256 of the secret part is stored; the token is shown once. */
export const personalAccessTokens = sqliteTable("personal_access_tokens", {
  id: text("id").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  secretHash: text("secret_hash").notNull(),
  /** Milliseconds since the epoch; null for a token that does not expire. */
  expiresAt: integer("expires_at"),
  createdAt: integer("created_at").notNull(),
  /**
   * Who issued the token when it was not the system (bootstrap, recover-admin): a role granted to the
   * user later revokes tokens whose issuer could not have granted that role (src/commands/add-member.ts).
   */
  issuerUserId: text("issuer_user_id"),
}, (table) => [
  // ListPersonalAccessTokens and the cascade when a user goes.
  index("personal_access_tokens_user").on(table.userId),
]);
