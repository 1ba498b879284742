import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations } from "./organization.js";

/** Users of both types; type-specific columns are null for the other type. */
export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    instanceId: text("instance_id").notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id),
    type: text("type", { enum: ["human", "machine"] }).notNull(),
    state: text("state", { enum: ["active", "initial"] }).notNull(),
    userName: text("user_name").notNull(),
    /** Lower-cased user name: unique per instance, case-insensitively, by this index. */
    userNameKey: text("user_name_key").notNull(),
    machineName: text("machine_name"),
    machineDescription: text("machine_description"),
  },
  (table) => [
    uniqueIndex("users_user_name_key").on(table.instanceId, table.userNameKey),
    index("users_org").on(table.orgId, table.id),
  ],
);
