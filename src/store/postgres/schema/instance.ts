import { pgTable, text } from "drizzle-orm/pg-core";

/** The one Gatehouse instance (the top-level tenant). Its row exists once bootstrap has run. */
export const instances = pgTable("instances", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  defaultOrgId: text("default_org_id").notNull(),
});
