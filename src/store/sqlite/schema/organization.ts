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
    /** An inactive organization's users cannot call; only instance roles may select it. */
    state: text("state", { enum: ["active", "inactive"] }).notNull().default("active"),
  },
  (table) => [uniqueIndex("organizations_name_key").on(table.instanceId, table.nameKey)],
);
