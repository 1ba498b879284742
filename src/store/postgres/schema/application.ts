import { index, json, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import type { ApplicationSettings } from "../../rows.js";
import { position } from "./position.js";
import { projects } from "./project.js";

export const applications = pgTable(
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
    /** Type-specific settings as JSON (json, not jsonb: kept as written). */
    settings: json("settings").$type<ApplicationSettings>().notNull(),
    position: position(),
  },
  (table) => [
    uniqueIndex("applications_name_key").on(table.projectId, table.nameKey),
    uniqueIndex("applications_client_id").on(table.clientId),
    index("applications_list").on(table.projectId, table.position),
  ],
);
