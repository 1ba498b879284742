import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One value sealed under the master key when the database was first opened with it. At every start
 * the key must open it: a wrong or replaced key is refused before anything sealed is needed, instead
 * of every SMTP password, IDP secret and queued mail failing later.
 */
export const masterKeyProbe = sqliteTable("master_key_probe", {
  id: integer("id").primaryKey(),
  sealed: text("sealed").notNull(),
});
