import { sql } from "drizzle-orm";
import { sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * The one Gatehouse instance (the top-level tenant). Its row exists once bootstrap has run. `instances_single` (a unique
 * index on a constant) allows one row only: of replicas bootstrapping an empty shared database at once, one commits
 * and the others' bootstrap fails (src/bootstrap.ts then serves the winner's instance).
 */
export const instances = sqliteTable(
  "instances",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    defaultOrgId: text("default_org_id").notNull(),
  },
  () => [uniqueIndex("instances_single").on(sql`(1)`)],
);
