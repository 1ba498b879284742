import { describe, expect, it } from "vitest";
import { createPrincipalCache } from "../../src/access/principal-cache.js";
import { DomainError } from "../../src/domain/errors.js";
import type { StoredEvent } from "../../src/events/event.js";
import type { Store } from "../../src/store/store.js";
import type { Commit, RowWrite } from "../../src/store/commit.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf, FIXTURE_AT, machineUser } from "./fixtures.js";

// The contract across replicas: two stores on one database (two processes, two connection pools) keep the rules one
// store keeps. Commits are serialized, so of two conflicting commits exactly one wins and the other fails as it would
// have one after the other; event sequences are strictly increasing and gap-free in commit order, so a reader that
// pages through the log never skips an event that commits later; a code's attempts never pass their maximum; and a
// change of access committed by one store changes the access version the other one reports.

const instance: RowWrite[] = [
  { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
  { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
];
const userNamed = (id: string, userName: string): RowWrite => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName, userNameKey: userName, machineName: "m", machineDescription: "" },
});
const event = (aggregateId: string, type = "user.changed") => ({ aggregateType: "user" as const, aggregateId, type, payload: {}, resourceOwner: "o1" });

/** Each outcome of `commits`, run at once: the stored events, or the error. */
async function settle(commits: Promise<StoredEvent[]>[]) {
  const outcomes = await Promise.allSettled(commits);
  return {
    won: outcomes.filter((outcome) => outcome.status === "fulfilled"),
    lost: outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as unknown] : [])),
  };
}

describe.each(storeEngines())("two stores on one $name database", (engine) => {
  const { store, another } = useStore(engine);

  it("two replicas create the same user name at once: exactly one wins, the other gets already_exists and writes nothing", async () => {
    await store().commit(commitOf(instance));
    const replica = await another();
    const create = (on: Store, id: string) => on.commit({ ...commitOf([userNamed(id, "same-name")]), events: [event(id, "user.machine.added")] });
    const { won, lost } = await settle([create(store(), "u-a"), create(replica, "u-b")]);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(DomainError);
    expect(lost[0]).toMatchObject({ kind: "already_exists", reason: "user.already_exists" });
    expect(await store().countUsers({ instanceId: "i1", orgId: "o1", userNameKey: "same-name" })).toBe(1);
    // Only the winner's event is in the log.
    expect(await store().countEvents({ aggregateType: "user" })).toBe(1);
  });

  it("two replicas deactivate the same user at once: exactly one wins, the other's conditional write fails with condition_failed", async () => {
    await store().commit(commitOf([...instance, machineUser("u1")]));
    const replica = await another();
    const deactivate = (on: Store) => on.commit({ ...commitOf([{ kind: "user.setInactive", id: "u1", inactive: true }]), events: [event("u1", "user.deactivated")] });
    const { won, lost } = await settle([deactivate(store()), deactivate(replica), deactivate(store()), deactivate(replica)]);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(3);
    for (const error of lost) expect(error).toMatchObject({ kind: "aborted", reason: "store.condition_failed" });
    expect((await replica.findUserById("u1"))?.inactive).toBe(true);
    expect(await store().countEvents({ aggregateId: "u1" })).toBe(1);
  });

  it("a removal on one replica and an addition that refers to it on the other, at once: never both (no member of a removed project)", async () => {
    const projects = Array.from({ length: 10 }, (_, i) => `p${i}`);
    await store().commit(
      commitOf([
        ...instance,
        machineUser("u1"),
        ...projects.map((id): RowWrite => ({ kind: "project.insert", row: { id, instanceId: "i1", orgId: "o1", name: id, nameKey: id, state: "active" } })),
      ]),
    );
    const replica = await another();
    const outcomes = await Promise.all(
      projects.map(async (id) => {
        const removal = store().commit(commitOf([{ kind: "project.delete", id }]));
        const membership = replica.commit(
          commitOf([{ kind: "membership.insert", row: { id: `m-${id}`, userId: "u1", level: "project", scopeId: id, ownerOrgId: "o1", projectId: null, roles: ["PROJECT_OWNER"] } }]),
        );
        return settle([removal, membership]);
      }),
    );
    for (const { won, lost } of outcomes) {
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
    }
    for (const id of projects) {
      const project = await store().findProjectById(id);
      const members = await store().countMembershipsOfScope("project", id);
      expect({ id, project: project !== undefined, members }).toEqual({ id, project: members > 0, members: project ? 1 : 0 });
    }
  });

  it("20 concurrent commits from two replicas: sequences strictly increasing and gap-free, and a reader never sees a later number before an earlier one", async () => {
    await store().commit(commitOf(instance));
    const replica = await another();
    const reader = await another();
    // Commits of one to three events each, half on each replica, all at once.
    const commits = Array.from({ length: 20 }, (_, i): Promise<StoredEvent[]> => {
      const on = i % 2 === 0 ? store() : replica;
      const events = Array.from({ length: 1 + (i % 3) }, () => event(`u${i % 4}`));
      const commit: Commit = { instanceId: "i1", actor: `actor-${i}`, at: FIXTURE_AT, writes: [], events };
      return on.commit(commit);
    });
    let done = false;
    const observed: number[][] = [];
    const watch = (async () => {
      // What a ListEvents reader sees while the commits land: always a gap-free prefix of the final log.
      while (!done) {
        observed.push((await reader.listEvents({ limit: 1000 })).map((e) => e.sequence));
        // A store that answers at once (SQLite) would otherwise keep the loop from ever running the commits' I/O.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const results = await Promise.all(commits);
    done = true;
    await watch;
    const total = results.reduce((sum, events) => sum + events.length, 0);
    const sequences = (await reader.listEvents({ limit: 1000 })).map((e) => e.sequence);
    expect(sequences).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // Each commit's events are consecutive numbers, and every number is some commit's.
    for (const events of results) expect(events.map((e) => e.sequence - events[0]!.sequence)).toEqual(events.map((_, i) => i));
    expect(results.flatMap((events) => events.map((e) => e.sequence)).sort((a, b) => a - b)).toEqual(sequences);
    for (const seen of observed) expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
    // Per-aggregate versions are 1, 2, 3 … for each user, whichever replica appended them.
    for (const id of ["u0", "u1", "u2", "u3"]) {
      const versions = (await reader.listEvents({ aggregateId: id, limit: 1000 })).map((e) => e.aggregateVersion);
      expect(versions).toEqual(Array.from({ length: versions.length }, (_, i) => i + 1));
    }
  });

  it("20 concurrent attempts on one code from two replicas: exactly max are counted, the rest fail with condition_failed", async () => {
    const code: RowWrite = { kind: "code.replace", row: { id: "c1", userId: "u1", kind: "email", digest: "d", expiresAt: 1, attempts: 0, usedAt: null } };
    await store().commit(commitOf([...instance, machineUser("u1"), code]));
    const replica = await another();
    const claim = (on: Store) => on.commit(commitOf([{ kind: "code.claimAttempt", id: "c1", max: 5 }]));
    const { won, lost } = await settle(Array.from({ length: 20 }, (_, i) => claim(i % 2 === 0 ? store() : replica)));
    expect(won).toHaveLength(5);
    expect(lost).toHaveLength(15);
    for (const error of lost) expect(error).toMatchObject({ kind: "aborted", reason: "store.condition_failed" });
    expect((await replica.findCode("u1", "email"))?.attempts).toBe(5);
  });

  it("an access-changing commit on one replica changes the access version the other reports; a creation does not change it", async () => {
    await store().commit(commitOf([...instance, machineUser("u1")]));
    const replica = await another();
    const before = await store().accessVersion();
    // A new user changes no principal anyone could have cached.
    await store().commit(commitOf([machineUser("u2")]));
    expect(await store().accessVersion()).toBe(before);
    const seenByReplica = await replica.accessVersion();
    await store().commit(commitOf([{ kind: "user.setLocked", id: "u1", locked: true }]));
    expect(await replica.accessVersion()).not.toBe(seenByReplica);
    expect(await store().accessVersion()).not.toBe(before);
    // And the other way round.
    const seenHere = await store().accessVersion();
    await replica.commit(commitOf([{ kind: "user.setLocked", id: "u1", locked: false }]));
    expect(await store().accessVersion()).not.toBe(seenHere);
  });

  it("a principal cached on one replica is not used once another replica locked its user, revoked its token or changed its roles", async () => {
    const token: RowWrite = { kind: "token.insert", row: { id: "t1", userId: "u1", secretHash: "h", expiresAt: null, createdAt: 0, issuerUserId: null } };
    const member: RowWrite = { kind: "membership.insert", row: { id: "m1", userId: "u1", level: "org", scopeId: "o1", ownerOrgId: "o1", projectId: null, roles: ["ORG_OWNER"] } };
    await store().commit(commitOf([...instance, machineUser("u1"), token, member]));
    const replica = await another();
    const principals = createPrincipalCache(replica);
    // A call is one turn of the event loop; the next call starts in a later one.
    const nextCall = () => new Promise((resolve) => setImmediate(resolve));
    expect((await principals("t1")).user?.locked).toBe(false);
    await store().commit(commitOf([{ kind: "user.setLocked", id: "u1", locked: true }]));
    await nextCall();
    expect((await principals("t1")).user?.locked).toBe(true);
    await store().commit(commitOf([{ kind: "membership.delete", id: "m1" }]));
    await nextCall();
    expect((await principals("t1")).memberships).toEqual([]);
    await store().commit(commitOf([{ kind: "token.delete", id: "t1" }]));
    await nextCall();
    expect((await principals("t1")).token).toBeUndefined();
  });
});
