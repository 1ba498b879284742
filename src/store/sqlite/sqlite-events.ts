import { asc, count, sql } from "drizzle-orm";
import type { NewEvent, StoredEvent } from "../../events/event.js";
import { eventConditions } from "../event-filter.js";
import type { GatehouseDb } from "./db.js";
import { events } from "./schema/index.js";
import { type MarkRow, toEventMark, toStoredEvent } from "../event-rows.js";
import type { AggregateSpan, EventFilter } from "../store.js";
import { EVENT_COUNT_LIMIT, eventsFrom, sequenceOrder } from "../event-filter.js";

const conditions = (filter: Omit<EventFilter, "limit">) => eventConditions(events, filter);

/** The event log on SQLite: append (inside the caller's transaction) and reads, with prepared hot paths. */
export function createSqliteEventLog(db: GatehouseDb) {
  const lastSequence = db.select({ last: sql<number | null>`max(${events.sequence})` }).from(events).prepare();
  // The span's reads run for every read's details. Written with a literal LIMIT 1: with a bound limit (what drizzle's
  // `.limit()` emits) SQLite ran each several times slower here (about 10 µs against 2).
  const client = db.$client;
  // An append runs for every event (a bulk import appends thousands per commit): plain statements, which cost a
  // fraction of drizzle's prepared queries (their parameters and results go through its mapping on every run).
  const nextVersion = client.prepare<[string, string], { next: number }>(
    "SELECT coalesce(max(aggregate_version), 0) + 1 AS next FROM events WHERE aggregate_type = ? AND aggregate_id = ?",
  );
  // No RETURNING: `sequence` is the rowid, which the insert reports anyway (RETURNING cost about 2 µs an event here).
  const insert = client.prepare<[string, string, string, number, string, string, string, string, number]>(
    "INSERT INTO events (instance_id, aggregate_type, aggregate_id, aggregate_version, type, payload, actor, resource_owner, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const ofOne = "FROM events WHERE aggregate_type = ? AND aggregate_id = ?";
  // A span's marks only: no payload read or parsed for a read's details.
  const MARK = "sequence, aggregate_version AS aggregateVersion, resource_owner AS resourceOwner, created_at AS createdAt";
  const firstOf = client.prepare<[string, string], MarkRow>(`SELECT ${MARK} ${ofOne} ORDER BY aggregate_version ASC LIMIT 1`);
  const lastOf = client.prepare<[string, string], MarkRow>(`SELECT ${MARK} ${ofOne} ORDER BY aggregate_version DESC LIMIT 1`);
  const lastCreation = client.prepare<[string, string, string], MarkRow>(`SELECT ${MARK} ${ofOne} AND type = ? ORDER BY aggregate_version DESC LIMIT 1`);

  return {
    /** Appends one event. Must run inside the commit's transaction (it is synchronous by design). */
    append(event: NewEvent, context: { instanceId: string; actor: string; at: Date }): StoredEvent {
      // Stryker disable next-line OptionalChaining: an aggregate query (max) always returns its one row
      const aggregateVersion = nextVersion.get(event.aggregateType, event.aggregateId)?.next ?? 1;
      const createdAt = context.at.getTime();
      const { lastInsertRowid } = insert.run(
        context.instanceId,
        event.aggregateType,
        event.aggregateId,
        aggregateVersion,
        event.type,
        JSON.stringify(event.payload),
        context.actor,
        event.resourceOwner,
        createdAt,
      );
      return { ...event, ...context, sequence: Number(lastInsertRowid), aggregateVersion, createdAt: new Date(createdAt) };
    },

    list(filter: EventFilter): StoredEvent[] {
      return db.select().from(events).where(conditions(filter)).orderBy(asc(sequenceOrder(events, filter))).limit(filter.limit).all().map(toStoredEvent);
    },

    count(filter: Omit<EventFilter, "afterSequence" | "limit">): number {
      if (filter.aggregateType === undefined && filter.aggregateId === undefined && filter.resourceOwner === undefined) {
        // Stryker disable next-line OptionalChaining: an aggregate query (max) always returns its one row
        return eventsFrom(lastSequence.get()?.last ?? 0, filter.fromSequence);
      }
      const matching = db.select({ one: sql`1` }).from(events).where(conditions(filter)).limit(EVENT_COUNT_LIMIT).as("matching");
      // Stryker disable next-line OptionalChaining: a count() query always returns its one row
      return db.select({ n: count() }).from(matching).get()?.n ?? 0;
    },

    span(type: string, id: string, createdBy?: string): AggregateSpan | undefined {
      const first = createdBy === undefined ? firstOf.get(type, id) : lastCreation.get(type, id, createdBy);
      const last = lastOf.get(type, id);
      return first && last ? { first: toEventMark(first), last: toEventMark(last) } : undefined;
    },
  };
}
