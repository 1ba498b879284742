import { index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { instances } from "./instance.js";
import { position } from "./position.js";

export const organizations = pgTable(
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
    position: position(),
  },
  (table) => [uniqueIndex("organizations_name_key").on(table.instanceId, table.nameKey), index("organizations_list").on(table.instanceId, table.position)],
);
