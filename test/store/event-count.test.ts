import { describe, expect, it } from "vitest";
import type { NewEvent } from "../../src/events/event.js";
import type { Commit } from "../../src/store/commit.js";
import { EVENT_COUNT_LIMIT } from "../../src/store/event-filter.js";
import { storeEngines, useStore } from "./engines.js";
import { FIXTURE_AT } from "./fixtures.js";

// Store.countEvents (src/store/store.ts): what ListEvents' total_result says. Exact for the whole log from any
// sequence on (sequences are gap-free from 1 and never deleted, so it is arithmetic, whatever the log's size), exact
// for a filtered list up to EVENT_COUNT_LIMIT matching events, and never more than that (a count is work any reader of
// the log can ask for: it is bounded).

const event = (aggregateType: string, aggregateId: string, resourceOwner: string): NewEvent =>
  ({ aggregateType, aggregateId, type: `${aggregateType}.changed`, payload: {}, resourceOwner }) as NewEvent;
const eventsCommit = (events: NewEvent[]): Commit => ({ instanceId: "i1", actor: "tester", at: FIXTURE_AT, writes: [], events });

describe.each(storeEngines())("counting events on $name", (engine) => {
  const { store } = useStore(engine);

  it("the whole log from a sequence on: every event from there to the last, none before 1 or after the last", async () => {
    expect(await store().countEvents({})).toBe(0);
    expect(await store().countEvents({ fromSequence: 3 })).toBe(0);
    await store().commit(eventsCommit([event("user", "u1", "o1"), event("user", "u2", "o1"), event("org", "o1", "o1")]));
    await store().commit(eventsCommit([event("user", "u1", "o2"), event("project", "p1", "o2"), event("user", "u3", "o1")]));
    const expected = async (fromSequence: number) => (await store().listEvents({ fromSequence, limit: 100 })).length;
    for (const fromSequence of [0, 1, 2, 4, 6, 7, 100]) {
      expect(await store().countEvents({ fromSequence }), `from ${fromSequence}`).toBe(await expected(fromSequence));
    }
    expect(await store().countEvents({})).toBe(6);
    expect(await store().countEvents({ fromSequence: 4 })).toBe(3);
    expect(await store().countEvents({ fromSequence: 6 })).toBe(1);
    expect(await store().countEvents({ fromSequence: 7 })).toBe(0);
  });

  it("with a filter: the matching events only, from a sequence on too", async () => {
    await store().commit(eventsCommit([event("user", "u1", "o1"), event("user", "u2", "o1"), event("org", "o1", "o1")]));
    await store().commit(eventsCommit([event("user", "u1", "o2"), event("project", "p1", "o2"), event("user", "u1", "o1")]));
    expect(await store().countEvents({ aggregateType: "user" })).toBe(4);
    expect(await store().countEvents({ aggregateType: "user", aggregateId: "u1" })).toBe(3);
    expect(await store().countEvents({ aggregateId: "u1", fromSequence: 4 })).toBe(2);
    expect(await store().countEvents({ resourceOwner: "o2" })).toBe(2);
    expect(await store().countEvents({ resourceOwner: "o1", fromSequence: 3 })).toBe(2);
    expect(await store().countEvents({ resourceOwner: "o3" })).toBe(0);
  });

  it("one object's events with an owner or a sequence bound, and one type's from a sequence on: listed in log order and counted", async () => {
    await store().commit(eventsCommit([event("user", "u1", "o1"), event("user", "u2", "o1"), event("org", "o1", "o1")]));
    await store().commit(eventsCommit([event("user", "u1", "o2"), event("project", "p1", "o2"), event("user", "u1", "o1")]));
    const sequences = async (filter: Parameters<ReturnType<typeof store>["listEvents"]>[0]) => (await store().listEvents(filter)).map((e) => e.sequence);
    expect(await sequences({ aggregateId: "u1", resourceOwner: "o1", limit: 10 })).toEqual([1, 6]);
    expect(await sequences({ aggregateType: "user", aggregateId: "u1", afterSequence: 1, limit: 10 })).toEqual([4, 6]);
    expect(await sequences({ aggregateId: "u1", resourceOwner: "o1", fromSequence: 2, limit: 10 })).toEqual([6]);
    expect(await sequences({ aggregateId: "u1", limit: 2 })).toEqual([1, 4]);
    expect(await sequences({ aggregateType: "user", afterSequence: 2, limit: 10 })).toEqual([4, 6]);
    expect(await sequences({ aggregateId: "u1", fromSequence: Number(2n ** 63n), limit: 10 })).toEqual([]);
    expect(await store().countEvents({ aggregateId: "u1", resourceOwner: "o1" })).toBe(2);
    expect(await store().countEvents({ aggregateType: "user", aggregateId: "u1", fromSequence: 2 })).toBe(2);
  });
});

describe.each(storeEngines().filter((engine) => engine.name === "sqlite"))("a filtered count of a long log on $name", (engine) => {
  const { store } = useStore(engine);

  it(`stops at ${EVENT_COUNT_LIMIT} matching events; the unfiltered count stays exact`, { timeout: 120_000 }, async () => {
    const many = Array.from({ length: EVENT_COUNT_LIMIT + 3 }, (_, i) => event("user", `u${i % 7}`, "o1"));
    await store().commit(eventsCommit(many));
    await store().commit(eventsCommit([event("org", "o2", "o2")]));
    expect(await store().countEvents({ resourceOwner: "o1" })).toBe(EVENT_COUNT_LIMIT);
    expect(await store().countEvents({ aggregateType: "user", fromSequence: 2 })).toBe(EVENT_COUNT_LIMIT);
    expect(await store().countEvents({ resourceOwner: "o2" })).toBe(1);
    expect(await store().countEvents({})).toBe(EVENT_COUNT_LIMIT + 4);
    expect(await store().countEvents({ fromSequence: EVENT_COUNT_LIMIT })).toBe(5);
  });
});
