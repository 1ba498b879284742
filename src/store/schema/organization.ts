import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { instances } from "./instance.js";

export const organizations = sqliteTable(
  "organizations",
  {
    id: text("id").primaryKey(),
    instanceId: text("instance_id")
      .notNull()
      .references(() => instances.id),
    name: text("name").notNull(),
    /** Lower-cased name: uniqueness is case-insensitive and enforced by the index, not by a read. */
    nameKey: text("name_key").notNull(),
  },
  (table) => [uniqueIndex("organizations_name_key").on(table.instanceId, table.nameKey)],
);
