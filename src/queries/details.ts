import type { AggregateType } from "../events/event.js";
import { type Details, detailsOf } from "../events/details.js";
import type { Store } from "../store/store.js";

/** Details of an object on read: its last event's sequence and time, its first event's time. */
export async function readDetails(store: Store, type: AggregateType, id: string, createdBy?: string): Promise<Details> {
  const span = await store.aggregateSpan(type, id, createdBy);
  if (!span) throw new Error(`${type} ${id} has no events`);
  return detailsOf(span.last, span.first.createdAt);
}

/** Pairs each row of a list with its details. */
export function withDetails<Row extends { id: string }>(store: Store, type: AggregateType, rows: Row[]): Promise<{ row: Row; details: Details }[]> {
  return Promise.all(rows.map(async (row) => ({ row, details: await readDetails(store, type, row.id) })));
}
