import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import { position } from "./position.js";
import { users } from "./user.js";

/** Personal access tokens. Only a SHA-256 of the secret part is stored; the token is shown once. */
export const personalAccessTokens = pgTable(
  "personal_access_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    secretHash: text("secret_hash").notNull(),
    /** Milliseconds since the epoch; null for a token that does not expire. */
    expiresAt: bigint("expires_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    /** Who issued the token when it was not the system (bootstrap, recover-admin); see the SQLite schema. */
    issuerUserId: text("issuer_user_id"),
    position: position(),
  },
  (table) => [
    // ListPersonalAccessTokens and the cascade when a user goes.
    index("personal_access_tokens_user").on(table.userId),
  ],
);
