import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { ApplicationSettings } from "../../rows.js";
import { projects } from "./project.js";

export const applications = sqliteTable(
  "applications",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** Lower-cased name: unique per project, case-insensitively. */
    nameKey: text("name_key").notNull(),
    /** Deactivated applications keep their settings; reactivation restores them. */
    state: text("state", { enum: ["active", "inactive"] }).notNull().default("active"),
    type: text("type", { enum: ["oidc", "api", "saml"] }).notNull(),
    /** OAuth client id (OIDC and API applications). */
    clientId: text("client_id"),
    /** SHA-256 of the generated client secret; the secret itself is shown once. */
    clientSecretHash: text("client_secret_hash"),
    /** Type-specific settings as JSON. */
    settings: text("settings", { mode: "json" }).$type<ApplicationSettings>().notNull(),
  },
  (table) => [uniqueIndex("applications_name_key").on(table.projectId, table.nameKey), uniqueIndex("applications_client_id").on(table.clientId)],
);
