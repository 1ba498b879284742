import type { StoredEvent } from "../events/event.js";
import type { EventRow } from "./rows.js";
import type { EventMark } from "./store.js";

/** The columns of an event row a span reads (see EventMark). */
export type MarkRow = Pick<EventRow, "sequence" | "aggregateVersion" | "resourceOwner" | "createdAt">;

export function toEventMark(row: MarkRow): EventMark {
  return { sequence: row.sequence, aggregateVersion: row.aggregateVersion, resourceOwner: row.resourceOwner, createdAt: new Date(row.createdAt) };
}

/** An event as the log stores it (payload as JSON text, time in milliseconds), as commands and queries read it. */
export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    sequence: row.sequence,
    instanceId: row.instanceId,
    aggregateType: row.aggregateType as StoredEvent["aggregateType"],
    aggregateId: row.aggregateId,
    aggregateVersion: row.aggregateVersion,
    type: row.type,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    actor: row.actor,
    resourceOwner: row.resourceOwner,
    createdAt: new Date(row.createdAt),
  };
}
