import { index, json, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { position } from "./position.js";
import { users } from "./user.js";

/** Roles of a user at one level (instance, org, project, project_grant) of one scope. */
export const memberships = pgTable(
  "memberships",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    level: text("level", { enum: ["instance", "org", "project", "project_grant"] }).notNull(),
    scopeId: text("scope_id").notNull(),
    /** Organization owning the scope (instance id for instance memberships). */
    ownerOrgId: text("owner_org_id").notNull(),
    /** For project_grant memberships: the granted project. */
    projectId: text("project_id"),
    /** JSON array of role names (json, not jsonb: kept as written, in its order). */
    roles: json("roles").$type<string[]>().notNull(),
    position: position(),
  },
  (table) => [uniqueIndex("memberships_user_scope").on(table.userId, table.level, table.scopeId), index("memberships_scope").on(table.level, table.scopeId)],
);
