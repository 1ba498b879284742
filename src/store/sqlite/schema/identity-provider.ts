import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Generic OIDC identity providers of an organization, or of the instance (org_id null). */
export const identityProviders = sqliteTable(
  "identity_providers",
  {
    id: text("id").primaryKey(),
    instanceId: text("instance_id").notNull(),
    /** Null for instance-level providers. */
    orgId: text("org_id"),
    /** The organization id, or the instance id for instance-level providers: the scope of name uniqueness. */
    ownerId: text("owner_id").notNull(),
    name: text("name").notNull(),
    nameKey: text("name_key").notNull(),
    issuer: text("issuer").notNull(),
    clientId: text("client_id").notNull(),
    /** AES-256-GCM under the master key, bound to the row id; never returned. */
    clientSecretSealed: text("client_secret_sealed").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    stylingType: integer("styling_type").notNull(),
    autoRegister: integer("auto_register", { mode: "boolean" }).notNull(),
  },
  (table) => [uniqueIndex("identity_providers_name_key").on(table.ownerId, table.nameKey)],
);
