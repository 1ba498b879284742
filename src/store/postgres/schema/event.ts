import { bigint, check, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";

/**
 * The instance-wide event log. `sequence` is assigned from `commit_counters.last_sequence` inside the commit that
 * appends the event (postgres/pg-commits.ts): strictly increasing, gap-free, in commit order. Per-aggregate `version`
 * is unique, so two writers cannot both append the same next event of one object.
 */
export const events = pgTable(
  "events",
  {
    sequence: bigint("sequence", { mode: "number" }).primaryKey(),
    instanceId: text("instance_id").notNull(),
    aggregateType: text("aggregate_type").notNull(),
    aggregateId: text("aggregate_id").notNull(),
    aggregateVersion: integer("aggregate_version").notNull(),
    type: text("type").notNull(),
    /** JSON text, as written; never holds secrets in clear. */
    payload: text("payload").notNull(),
    actor: text("actor").notNull(),
    resourceOwner: text("resource_owner").notNull(),
    /** Milliseconds since the epoch, from the injected clock. */
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (table) => [
    uniqueIndex("events_aggregate_version").on(table.aggregateType, table.aggregateId, table.aggregateVersion),
    index("events_resource_owner").on(table.resourceOwner, table.sequence),
    // ListEvents of one aggregate type (every user's events, say), paged in log order without sorting them all.
    index("events_type_sequence").on(table.aggregateType, table.sequence),
  ],
);

/**
 * One row (id 1) that every commit updates first, in its own transaction: the lock on it serializes commits across
 * every replica (pg-commits.ts says why), `last_sequence` numbers the events, and `access_version` changes with every
 * commit that may change a principal (Store.accessVersion).
 */
export const commitCounters = pgTable(
  "commit_counters",
  {
    id: integer("id").primaryKey(),
    lastSequence: bigint("last_sequence", { mode: "number" }).notNull(),
    accessVersion: bigint("access_version", { mode: "number" }).notNull(),
  },
  (table) => [check("commit_counters_one_row", sql`${table.id} = 1`)],
);
