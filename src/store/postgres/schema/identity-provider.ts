import { boolean, integer, json, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { position } from "./position.js";

/** Generic OIDC identity providers of an organization, or of the instance (org_id null). */
export const identityProviders = pgTable(
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
    scopes: json("scopes").$type<string[]>().notNull(),
    stylingType: integer("styling_type").notNull(),
    autoRegister: boolean("auto_register").notNull(),
    position: position(),
  },
  (table) => [uniqueIndex("identity_providers_name_key").on(table.ownerId, table.nameKey)],
);
