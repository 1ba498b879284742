import { primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { organizations } from "./organization.js";

export const projects = sqliteTable(
  "projects",
  {
    id: text("id").primaryKey(),
    instanceId: text("instance_id").notNull(),
    orgId: text("org_id")
      .notNull()
      .references(() => organizations.id),
    name: text("name").notNull(),
    /** Lower-cased name: unique per organization, case-insensitively. */
    nameKey: text("name_key").notNull(),
    /** Deactivated projects keep their data; reactivation restores them. */
    state: text("state", { enum: ["active", "inactive"] }).notNull().default("active"),
  },
  (table) => [uniqueIndex("projects_name_key").on(table.orgId, table.nameKey)],
);

/** Role keys a project defines; grants hand out subsets of them. */
export const projectRoles = sqliteTable(
  "project_roles",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    roleKey: text("role_key").notNull(),
    displayName: text("display_name").notNull(),
  },
  (table) => [primaryKey({ columns: [table.projectId, table.roleKey] })],
);

/** A project granted to another organization with a subset of its role keys. */
export const projectGrants = sqliteTable(
  "project_grants",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    grantedOrgId: text("granted_org_id")
      .notNull()
      .references(() => organizations.id),
    roleKeys: text("role_keys", { mode: "json" }).$type<string[]>().notNull(),
  },
  (table) => [uniqueIndex("project_grants_project_org").on(table.projectId, table.grantedOrgId)],
);
