import { describe, expect, it } from "vitest";
import type { EventFilter } from "../../src/store/store.js";
import { useRecordedPlans } from "./query-plans.js";

// Store.countEvents / listEvents (src/store/store.ts): a count or a page is work any reader of the log can ask for,
// so it costs what its matches cost, not the size of the log — every filter ListEvents offers is served by an index:
// SQLite's plan for each statement the store runs never scans the events table. (An aggregate id without its type
// once did: found in review.)

const { store, plansOf } = useRecordedPlans();

describe("the events a filter selects", () => {
  // The index each filter must be read through; only one object's events (a few) may be sorted.
  const TYPE = /SEARCH events USING (COVERING )?INDEX events_type_sequence \(aggregate_type=\?/;
  const ONE_OBJECT = /SEARCH events USING (COVERING )?INDEX events_aggregate_version \(aggregate_type=\? AND aggregate_id=\?\)/;
  const OWNER = /SEARCH events USING (COVERING )?INDEX events_resource_owner \(resource_owner=\?/;
  it.each<[string, Omit<EventFilter, "limit">, RegExp]>([
    ["an aggregate type alone", { aggregateType: "user" }, TYPE],
    ["an aggregate type alone, from a sequence on", { aggregateType: "user", fromSequence: 5 }, TYPE],
    ["an aggregate id alone", { aggregateId: "u1" }, ONE_OBJECT],
    ["an aggregate id alone, from a sequence on", { aggregateId: "u1", fromSequence: 5 }, ONE_OBJECT],
    ["a type and an id", { aggregateType: "user", aggregateId: "u1" }, ONE_OBJECT],
    ["a type and an id, from a sequence on", { aggregateType: "user", aggregateId: "u1", fromSequence: 5 }, ONE_OBJECT],
    ["an organization's events", { resourceOwner: "o1" }, OWNER],
    ["an organization's events of one object", { resourceOwner: "o1", aggregateId: "u1" }, ONE_OBJECT],
  ])("%s: counted and paged through the index of the filter, never by scanning the log or sorting more than one object's events", async (_name, filter, index) => {
    const plans = await plansOf("events", async () => {
      await store().countEvents(filter);
      await store().listEvents({ ...filter, limit: 100 });
      await store().listEvents({ ...filter, afterSequence: 10, limit: 100 });
    });
    for (const plan of plans) {
      expect(plan, plan).toMatch(index);
      if (index !== ONE_OBJECT) expect(plan, plan).not.toMatch(/TEMP B-TREE/);
    }
  });
});
