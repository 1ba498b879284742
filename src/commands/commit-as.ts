import type { Caller, Deps } from "../context.js";
import { type Details, detailsOf } from "../events/details.js";
import type { AggregateType, StoredEvent } from "../events/event.js";
import { spanOf } from "../queries/details.js";
import { checkExpectation, type Commit, type Expectation } from "../store/commit.js";

/** Commits writes and events on behalf of the caller: their instance, their id as actor, the clock's time. */
export function commitAs(deps: Deps, caller: Caller, change: Pick<Commit, "writes" | "events" | "expect">, at = deps.clock.now()): Promise<StoredEvent[]> {
  return deps.store.commit({ instanceId: caller.principal.instanceId, actor: caller.principal.userId, at, ...change });
}

/** A request's optional `expected_sequence` (optimistic concurrency); absent: last writer wins. */
export interface Expected {
  expectedSequence?: bigint | undefined;
}

/**
 * The expectation a commit carries when the request has `expected_sequence`: the object the call changes (the one
 * whose details it answers with) must still be at that sequence, checked by the store inside the commit.
 */
export function expectationOf(aggregateType: AggregateType, aggregateId: string, request: Expected): Expectation | undefined {
  // Sequences are far below 2^53; a larger expected value stays larger as a Number, so it never matches either.
  return request.expectedSequence === undefined ? undefined : { aggregateType, aggregateId, sequence: Number(request.expectedSequence) };
}

/**
 * The details of an update that changes nothing (nothing is committed): a caller whose `expected_sequence` is stale is
 * told so all the same (aborted, concurrent_modification), judged against the object as just read.
 */
export async function detailsOfNoChange(
  deps: Deps,
  object: { type: AggregateType; id: string; createdBy?: string },
  expect: Expectation | undefined,
): Promise<Details> {
  const span = await spanOf(deps.store, object.type, object.id, object.createdBy);
  if (expect) checkExpectation(expect, span.last.sequence);
  return detailsOf(span.last, span.first.createdAt);
}
