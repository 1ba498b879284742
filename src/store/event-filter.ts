import { and, type Column, eq, gt, gte, inArray, type SQL, sql } from "drizzle-orm";
import { AGGREGATE_TYPES } from "../events/event.js";
import type { EventFilter } from "./store.js";

/** The columns of an engine's events table that a filter reads. */
export interface EventFilterColumns {
  aggregateType: Column;
  aggregateId: Column;
  resourceOwner: Column;
  sequence: Column;
}

/** The WHERE of the events an EventFilter selects, the same on every engine. */
export function eventConditions(events: EventFilterColumns, filter: Omit<EventFilter, "limit">): SQL | undefined {
  const parts: SQL[] = [];
  if (filter.aggregateType) parts.push(eq(events.aggregateType, filter.aggregateType));
  if (filter.aggregateId) parts.push(eq(events.aggregateId, filter.aggregateId));
  // An id without its type is still looked up through the (type, id, version) index, type by type: no index starts
  // with the id, and reading the whole log for one object is work any reader of it could ask for.
  if (filter.aggregateId && !filter.aggregateType) parts.push(inArray(events.aggregateType, [...AGGREGATE_TYPES]));
  // With an aggregate id, the owner and the sequence are compared as expressions no index serves (`owner || ''`,
  // `+sequence`, valid on both engines): one object's events are found through the (type, id, version) index and sorted
  // (a few), where a planner without statistics (SQLite's) would rather walk every event of the type or of the
  // organization along an index in sequence order, to avoid that sort.
  const one = Boolean(filter.aggregateId);
  if (filter.resourceOwner) parts.push(one ? sql`${events.resourceOwner} || '' = ${filter.resourceOwner}` : eq(events.resourceOwner, filter.resourceOwner));
  if (filter.fromSequence !== undefined) {
    const bound = sequenceBound(filter.fromSequence);
    parts.push(one ? sql`+${events.sequence} >= ${bound}` : gte(events.sequence, bound));
  }
  if (filter.afterSequence !== undefined) {
    const bound = sequenceBound(filter.afterSequence);
    parts.push(one ? sql`+${events.sequence} > ${bound}` : gt(events.sequence, bound));
  }
  return and(...parts);
}

/** The order of a page of events: the sequence, as an expression when one object's events are read (see above). */
export function sequenceOrder(events: EventFilterColumns, filter: Pick<EventFilter, "aggregateId">): SQL {
  return filter.aggregateId ? sql`+${events.sequence}` : sql`${events.sequence}`;
}

/** The most events `countEvents` counts when a filter other than `fromSequence` is set (a few ms of index reads). */
export const EVENT_COUNT_LIMIT = 100_000;

/**
 * A sequence bound as the engines can compare it: sequences are whole numbers below 2^53 on every engine, so a bound
 * past that (a caller's from_sequence is any uint64; PostgreSQL's bigint refuses 2^63 and more) is clamped to the
 * largest, which selects exactly the same events: none beyond it.
 */
export function sequenceBound(sequence: number): number {
  return Math.min(sequence, Number.MAX_SAFE_INTEGER);
}

/** The number of events from `fromSequence` (1 and below: from the start) to the last one, sequences being gap-free from 1. */
export function eventsFrom(lastSequence: number, fromSequence: number | undefined): number {
  return Math.max(0, lastSequence - Math.max(fromSequence ?? 1, 1) + 1);
}
