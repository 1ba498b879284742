import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import type { StoredEvent } from "../../src/events/event.js";
import type { Store } from "../../src/store/store.js";
import type { Commit, RowWrite } from "../../src/store/commit.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf, machineUser } from "./fixtures.js";

// Optimistic concurrency in the store: a commit may carry an expectation (the sequence of an aggregate's last event,
// as the caller read it in details.sequence). Inside the commit's transaction, before any write, the aggregate's last
// event must still be at that sequence; otherwise the commit fails with aborted / concurrent_modification, metadata
// current_sequence = the sequence now ("0" for an aggregate without events), and writes nothing.

const instance: RowWrite[] = [
  { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
  { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
];
const userEvent = (aggregateId: string, type: string) => ({ aggregateType: "user" as const, aggregateId, type, payload: {}, resourceOwner: "o1" });
const expecting = (aggregateId: string, sequence: number) => ({ aggregateType: "user", aggregateId, sequence });

/** Deactivates u1 with its event, expecting `expect` when given. */
const deactivation = (expect?: Commit["expect"]): Commit => ({
  ...commitOf([{ kind: "user.setInactive", id: "u1", inactive: true }]),
  events: [userEvent("u1", "user.deactivated")],
  ...(expect ? { expect } : {}),
});

/** A store with u1 (created by one event) and u2 (one event, later); returns both events. */
async function seed(store: Store): Promise<{ u1: StoredEvent; u2: StoredEvent }> {
  await store.commit(commitOf(instance));
  const [u1] = await store.commit({ ...commitOf([machineUser("u1")]), events: [userEvent("u1", "user.machine.added")] });
  const [u2] = await store.commit({ ...commitOf([machineUser("u2")]), events: [userEvent("u2", "user.machine.added")] });
  return { u1: u1!, u2: u2! };
}

async function failure(commit: Promise<unknown>): Promise<DomainError> {
  const error = await commit.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe.each(storeEngines())("a commit's expected sequence on $name", (engine) => {
  const { store, another } = useStore(engine);

  it("commits when the aggregate's last event is still the expected one, though other aggregates changed since", async () => {
    const { u1, u2 } = await seed(store());
    // u2's event is newer than u1's: the instance moved on, u1 did not.
    expect(u2.sequence).toBeGreaterThan(u1.sequence);
    const [stored] = await store().commit(deactivation(expecting("u1", u1.sequence)));
    expect(stored).toMatchObject({ aggregateId: "u1", type: "user.deactivated" });
    expect((await store().findUserById("u1"))?.inactive).toBe(true);
  });

  it("a stale expectation fails aborted / concurrent_modification with the current sequence, and writes nothing", async () => {
    const { u1 } = await seed(store());
    const [changed] = await store().commit({ ...commitOf([{ kind: "user.setLocked", id: "u1", locked: true }]), events: [userEvent("u1", "user.locked")] });
    const eventsBefore = await store().countEvents({});
    const error = await failure(store().commit(deactivation(expecting("u1", u1.sequence))));
    expect(error).toMatchObject({ kind: "aborted", reason: "concurrent_modification", metadata: { current_sequence: String(changed!.sequence) } });
    expect(error.message).toContain("user");
    // Nothing written: the row as it was, no event, and no sequence number used up (the next event follows at once).
    expect((await store().findUserById("u1"))?.inactive).toBe(false);
    expect(await store().countEvents({})).toBe(eventsBefore);
    const [next] = await store().commit({ ...commitOf([]), events: [userEvent("u2", "user.changed")] });
    expect(next!.sequence).toBe(changed!.sequence + 1);
  });

  it("an expectation newer than the aggregate's last event fails too: only equality commits", async () => {
    const { u1, u2 } = await seed(store());
    const error = await failure(store().commit(deactivation(expecting("u1", u2.sequence))));
    expect(error.metadata).toEqual({ current_sequence: String(u1.sequence) });
    expect((await store().findUserById("u1"))?.inactive).toBe(false);
  });

  it("is checked before the writes: a stale expectation wins over a write that would fail", async () => {
    const { u1 } = await seed(store());
    await store().commit(deactivation());
    // u1 is inactive now, so this conditional write would fail with store.condition_failed; the expectation speaks first.
    const error = await failure(store().commit(deactivation(expecting("u1", u1.sequence))));
    expect(error.reason).toBe("concurrent_modification");
  });

  it("an aggregate without events is at sequence 0: 0 is its current_sequence, and an expectation of 0 commits", async () => {
    await seed(store());
    const error = await failure(store().commit({ ...commitOf([machineUser("u3")]), events: [userEvent("u3", "user.machine.added")], expect: expecting("u3", 7) }));
    expect(error).toMatchObject({ reason: "concurrent_modification", metadata: { current_sequence: "0" } });
    expect(await store().findUserById("u3")).toBeUndefined();
    await store().commit({ ...commitOf([machineUser("u3")]), events: [userEvent("u3", "user.machine.added")], expect: expecting("u3", 0) });
    expect(await store().findUserById("u3")).toBeDefined();
  });

  it("names the aggregate by type and id: an expectation on another type of the same id is judged by that aggregate's events", async () => {
    const { u1 } = await seed(store());
    const error = await failure(store().commit(deactivation({ aggregateType: "org", aggregateId: "u1", sequence: u1.sequence })));
    expect(error.metadata).toEqual({ current_sequence: "0" });
  });

  it("without an expectation the last writer wins, as before", async () => {
    await seed(store());
    await store().commit({ ...commitOf([{ kind: "user.setLocked", id: "u1", locked: true }]), events: [userEvent("u1", "user.locked")] });
    await store().commit(deactivation());
    expect((await store().findUserById("u1"))?.inactive).toBe(true);
  });

  it("two replicas commit with the same expectation at once: exactly one wins, the other is told the winner's sequence", async () => {
    const { u1 } = await seed(store());
    const replica = await another();
    const rename = (on: Store, type: string) => on.commit({ ...commitOf([]), events: [userEvent("u1", type)], expect: expecting("u1", u1.sequence) });
    const outcomes = await Promise.allSettled([rename(store(), "user.a"), rename(replica, "user.b"), rename(store(), "user.c"), rename(replica, "user.d")]);
    const won = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? outcome.value : []));
    const lost = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as DomainError] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(3);
    for (const error of lost) expect(error).toMatchObject({ kind: "aborted", reason: "concurrent_modification", metadata: { current_sequence: String(won[0]!.sequence) } });
    expect(await store().countEvents({ aggregateType: "user", aggregateId: "u1" })).toBe(2);
  });
});
