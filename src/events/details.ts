import type { StoredEvent } from "./event.js";

/** The fields of an event that details are made of (a StoredEvent has them; so has a span's mark). */
type DetailsSource = Pick<StoredEvent, "sequence" | "resourceOwner" | "createdAt">;

/** The `details` of every response, derived from the event log (see details.proto). */
export interface Details {
  sequence: number;
  creationDate?: Date;
  changeDate: Date;
  resourceOwner: string;
}

/** Details of a write whose last appended event is `last` on an object first seen at `createdAt`. */
export function detailsOf(last: DetailsSource, createdAt: Date): Details {
  return { sequence: last.sequence, creationDate: createdAt, changeDate: last.createdAt, resourceOwner: last.resourceOwner };
}

/** Details of a create: creation and change are the same event time. */
export function detailsOfCreate(events: StoredEvent[]): Details {
  const last = lastOf(events);
  return detailsOf(last, last.createdAt);
}

/** Details of a write to an object whose first event is `first` (read before the write). */
export function detailsOfChange(events: StoredEvent[], first: Pick<StoredEvent, "createdAt">): Details {
  const last = lastOf(events);
  return detailsOf(last, first.createdAt);
}

export function lastOf(events: StoredEvent[]): StoredEvent {
  const last = events.at(-1);
  // (Unreachable: every write appends at least one event, so the `false` mutant is equivalent; `true` fails every write.)
  // Stryker disable next-line StringLiteral: the message is for the log only
  if (!last) throw new Error("a write appended no event");
  return last;
}
