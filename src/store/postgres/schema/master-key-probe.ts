import { integer, pgTable, text } from "drizzle-orm/pg-core";

/** One value sealed under the master key when the database was first opened with it (see the SQLite schema). */
export const masterKeyProbe = pgTable("master_key_probe", {
  id: integer("id").primaryKey(),
  sealed: text("sealed").notNull(),
});
