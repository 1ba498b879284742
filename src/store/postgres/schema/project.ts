import { index, json, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { organizations } from "./organization.js";
import { position } from "./position.js";

export const projects = pgTable(
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
    position: position(),
  },
  (table) => [uniqueIndex("projects_name_key").on(table.orgId, table.nameKey), index("projects_list").on(table.orgId, table.position)],
);

/** Role keys a project defines; grants hand out subsets of them. */
export const projectRoles = pgTable(
  "project_roles",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    roleKey: text("role_key").notNull(),
    displayName: text("display_name").notNull(),
    position: position(),
  },
  // Named as SQLite's key is known to db-errors.ts: a duplicate role answers project.role.already_exists.
  (table) => [primaryKey({ name: "project_roles_pkey", columns: [table.projectId, table.roleKey] })],
);

/** A project granted to another organization with a subset of its role keys. */
export const projectGrants = pgTable(
  "project_grants",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    grantedOrgId: text("granted_org_id")
      .notNull()
      .references(() => organizations.id),
    roleKeys: json("role_keys").$type<string[]>().notNull(),
    position: position(),
  },
  (table) => [uniqueIndex("project_grants_project_org").on(table.projectId, table.grantedOrgId)],
);
