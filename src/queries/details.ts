import type { AggregateType } from "../events/event.js";
import { type Details, detailsOf } from "../events/details.js";
import type { AggregateSpan, Store } from "../store/store.js";

/**
 * The first and last event of an object that exists (see Store.aggregateSpan for `createdBy`). Every row is written
 * with its first event in one commit, so an object without events is a bug, never a caller's mistake.
 */
export async function spanOf(store: Store, type: AggregateType, id: string, createdBy?: string): Promise<AggregateSpan> {
  const span = await store.aggregateSpan(type, id, createdBy);
  // Stryker disable next-line StringLiteral,ConditionalExpression: unreachable: every aggregate a read finds was made by a write that appended its first event; the text only reaches the server log
  if (!span) throw new Error(`${type} ${id} has no events`);
  return span;
}

/** Details of an object on read: its last event's sequence and time, its first event's time. */
export async function readDetails(store: Store, type: AggregateType, id: string, createdBy?: string): Promise<Details> {
  const span = await spanOf(store, type, id, createdBy);
  return detailsOf(span.last, span.first.createdAt);
}

/** Pairs each row of a list with its details. */
export function withDetails<Row extends { id: string }>(store: Store, type: AggregateType, rows: Row[]): Promise<{ row: Row; details: Details }[]> {
  return Promise.all(rows.map(async (row) => ({ row, details: await readDetails(store, type, row.id) })));
}
