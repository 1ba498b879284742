import { and, type Column, eq, gt, gte, inArray, type SQL } from "drizzle-orm";
import { AGGREGATE_TYPES } from "../events/event.js";
import { type EventFilter, sequenceBound } from "./store.js";

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
  if (filter.resourceOwner) parts.push(eq(events.resourceOwner, filter.resourceOwner));
  if (filter.fromSequence !== undefined) parts.push(gte(events.sequence, sequenceBound(filter.fromSequence)));
  if (filter.afterSequence !== undefined) parts.push(gt(events.sequence, sequenceBound(filter.afterSequence)));
  return and(...parts);
}
