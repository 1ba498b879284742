import { and, asc, count, eq, max, min, or, sql } from "drizzle-orm";
import type { NewEvent, StoredEvent } from "../../events/event.js";
import { eventConditions } from "../event-filter.js";
import { toEventMark, toStoredEvent } from "../event-rows.js";
import type { AggregateSpan, EventFilter } from "../store.js";
import { EVENT_COUNT_LIMIT, eventsFrom } from "../event-filter.js";
import type { PostgresDb } from "./pg-db.js";
import { events } from "./schema/index.js";

type Executor = Pick<PostgresDb, "select" | "insert">;

const conditions = (filter: Omit<EventFilter, "limit">) => eventConditions(events, filter);

const ofAggregate = (type: string, id: string) => and(eq(events.aggregateType, type), eq(events.aggregateId, id));

/** The event log on PostgreSQL: append (inside the commit's transaction, after it took the sequence) and reads. */
export function createPostgresEventLog(db: PostgresDb) {
  return {
    /**
     * Appends a commit's events with the sequences `firstSequence`, `firstSequence + 1`, …, which the commit took
     * (pg-commits.ts). The next version of each aggregate is read in the same transaction: commits are serialized, so
     * no other commit appends to it meanwhile (and the unique index would refuse one that did).
     */
    async append(tx: Executor, list: NewEvent[], firstSequence: number, context: { instanceId: string; actor: string; at: Date }): Promise<StoredEvent[]> {
      if (list.length === 0) return [];
      const nextVersions = new Map<string, number>();
      const createdAt = context.at.getTime();
      const stored: StoredEvent[] = [];
      for (const [index, event] of list.entries()) {
        const key = JSON.stringify([event.aggregateType, event.aggregateId]);
        let version = nextVersions.get(key);
        if (version === undefined) {
          const [row] = await tx
            .select({ last: sql<number>`coalesce(max(${events.aggregateVersion}), 0)`.mapWith(Number) })
            .from(events)
            .where(ofAggregate(event.aggregateType, event.aggregateId));
          version = (row?.last ?? 0) + 1;
        }
        nextVersions.set(key, version + 1);
        stored.push({ ...event, ...context, sequence: firstSequence + index, aggregateVersion: version, createdAt: new Date(createdAt) });
      }
      await tx.insert(events).values(
        stored.map((event) => ({
          sequence: event.sequence,
          instanceId: event.instanceId,
          aggregateType: event.aggregateType,
          aggregateId: event.aggregateId,
          aggregateVersion: event.aggregateVersion,
          type: event.type,
          payload: JSON.stringify(event.payload),
          actor: event.actor,
          resourceOwner: event.resourceOwner,
          createdAt,
        })),
      );
      return stored;
    },

    async list(filter: EventFilter): Promise<StoredEvent[]> {
      const rows = await db.select().from(events).where(conditions(filter)).orderBy(asc(events.sequence)).limit(filter.limit);
      return rows.map(toStoredEvent);
    },

    async count(filter: Omit<EventFilter, "afterSequence" | "limit">): Promise<number> {
      if (filter.aggregateType === undefined && filter.aggregateId === undefined && filter.resourceOwner === undefined) {
        const [row] = await db.select({ last: max(events.sequence) }).from(events);
        return eventsFrom(Number(row?.last ?? 0), filter.fromSequence);
      }
      const matching = db.select({ one: sql`1` }).from(events).where(conditions(filter)).limit(EVENT_COUNT_LIMIT).as("matching");
      const [row] = await db.select({ n: count() }).from(matching);
      return row?.n ?? 0;
    },

    /**
     * One statement, so one snapshot: read apart, a commit between the two reads could make "first" (the newest
     * creation) newer than "last".
     */
    async span(type: string, id: string, createdBy?: string): Promise<AggregateSpan | undefined> {
      const scope = ofAggregate(type, id);
      const edge =
        createdBy === undefined
          ? db.select({ version: min(events.aggregateVersion) }).from(events).where(scope)
          : db.select({ version: max(events.aggregateVersion) }).from(events).where(and(scope, eq(events.type, createdBy)));
      const newest = db.select({ version: max(events.aggregateVersion) }).from(events).where(scope);
      const rows = await db
        .select({ sequence: events.sequence, aggregateVersion: events.aggregateVersion, resourceOwner: events.resourceOwner, createdAt: events.createdAt, type: events.type })
        .from(events)
        .where(and(scope, or(sql`${events.aggregateVersion} = (${edge})`, sql`${events.aggregateVersion} = (${newest})`)))
        .orderBy(asc(events.aggregateVersion));
      const [first] = rows;
      const last = rows.at(-1);
      // No creation event: the newest event alone came back, and it is no creation.
      if (!first || !last || (createdBy !== undefined && first.type !== createdBy)) return undefined;
      return { first: toEventMark(first), last: toEventMark(last) };
    },
  };
}
