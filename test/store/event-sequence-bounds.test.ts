import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/events/event.js";
import type { Commit } from "../../src/store/commit.js";
import { storeEngines, useStore } from "../store/engines.js";
import { FIXTURE_AT } from "../store/fixtures.js";

// ListEventsRequest.from_sequence is any uint64 (event.proto): "only events with a sequence greater than or equal to
// this one"; a start past the last event lists nothing and counts 0 — on every engine, never a server error
// (PostgreSQL's bigint cannot even take 2^63 as a parameter: store.ts sequenceBound; found in review).

const event = (aggregateId: string): NewEvent => ({ aggregateType: "user", aggregateId, type: "user.changed", payload: {}, resourceOwner: "o1" }) as NewEvent;
const eventsCommit = (events: NewEvent[]): Commit => ({ instanceId: "i1", actor: "tester", at: FIXTURE_AT, writes: [], events });
const PAST_BIGINT = Number(2n ** 63n);

describe.each(storeEngines())("a start past every bigint on $name", (engine) => {
  const { store } = useStore(engine);
  const check = async () => {
    await store().commit(eventsCommit([event("u1"), event("u2")]));
    expect(await store().listEvents({ fromSequence: PAST_BIGINT, limit: 10 })).toEqual([]);
    expect(await store().countEvents({ aggregateType: "user", fromSequence: PAST_BIGINT })).toBe(0);
    expect(await store().countEvents({ fromSequence: PAST_BIGINT })).toBe(0);
  };
  it("lists and counts nothing (no server error)", check);
});
