import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * The instance-wide event log. `sequence` is AUTOINCREMENT so it strictly increases and is never
 * reused, even after deletes; per-aggregate `version` is unique, so two writers cannot both append
 * the same next event of one object.
 */
export const events = sqliteTable(
  "events",
  {
    sequence: integer("sequence").primaryKey({ autoIncrement: true }),
    instanceId: text("instance_id").notNull(),
    aggregateType: text("aggregate_type").notNull(),
    aggregateId: text("aggregate_id").notNull(),
    aggregateVersion: integer("aggregate_version").notNull(),
    type: text("type").notNull(),
    /** JSON; never holds secrets in clear. */
    payload: text("payload").notNull(),
    actor: text("actor").notNull(),
    resourceOwner: text("resource_owner").notNull(),
    /** Milliseconds since the epoch, from the injected clock. */
    createdAt: integer("created_at").notNull(),
  },
  (table) => [
    uniqueIndex("events_aggregate_version").on(table.aggregateType, table.aggregateId, table.aggregateVersion),
    index("events_resource_owner").on(table.resourceOwner, table.sequence),
    // ListEvents of one aggregate type (every user's events, say), paged in log order without sorting them all.
    index("events_type_sequence").on(table.aggregateType, table.sequence),
  ],
);
