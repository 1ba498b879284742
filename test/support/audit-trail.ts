import type { JsonObject } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { expect } from "vitest";
import { type Event, EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import type { Clients, Protocol } from "./clients.js";
import { lastSequence } from "./event-log.js";
import { type Actor, createActor } from "./world.js";

/**
 * One event as the catalogue at `Event.payload` in proto/gatehouse/admin/v1/event.proto states it: its
 * type, the object it is about, who owns that object, who caused it, and the exact payload.
 */
export interface TrailEntry {
  type: string;
  aggregateType: string;
  aggregateId: string;
  resourceOwner: string;
  actor: string;
  payload: JsonObject | undefined;
}

export const trailEntry = (event: Event): TrailEntry => ({
  type: event.eventType,
  aggregateType: event.aggregateType,
  aggregateId: event.aggregateId,
  resourceOwner: event.resourceOwner,
  actor: event.actor,
  payload: event.payload,
});

/** A builder of expected entries for the events one actor causes in one organization (or instance). */
export const entriesBy =
  (actor: string, resourceOwner: string) =>
  (type: string, aggregateType: string, aggregateId: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType, aggregateId, resourceOwner, actor, payload });

/** Which events to read: one aggregate type, optionally one aggregate. */
export interface TrailFilter {
  aggregateType: string;
  aggregateId?: string;
}

/** What a write answers: its details, whose sequence is that of the last event it appended. */
export interface Written {
  details?: { sequence: bigint };
}

/** The audit trail of one server, read through EventService (as a caller with instance-wide `events.read`). */
export class AuditTrail {
  constructor(
    private readonly clients: Clients,
    private readonly token: string,
  ) {}

  private events(protocol: Protocol) {
    return this.clients.client(EventService, protocol, { token: this.token });
  }

  /** The sequence of the newest event now: what a later write appends comes after it. */
  mark(): Promise<bigint> {
    return lastSequence(this.events("connect-json-http1"));
  }

  /** The events of `filter` after `mark`, up to and including `upTo` when given, in log order. */
  async since(mark: bigint, filter: TrailFilter, upTo?: bigint, protocol: Protocol = "connect-json-http1"): Promise<TrailEntry[]> {
    const { events } = await this.events(protocol).listEvents({ ...filter, fromSequence: mark + 1n, pageSize: 1000 });
    return events.filter((event) => upTo === undefined || event.sequence <= upTo).map(trailEntry);
  }

  /**
   * Runs one write and returns its response with the events it appended to `filter`: those after the
   * newest event before the write, up to the write's own `details.sequence` (the last event it appended).
   */
  async record<R extends Written>(
    write: () => Promise<R>,
    filter: TrailFilter | ((response: R) => TrailFilter),
    protocol: Protocol = "connect-json-http1",
  ): Promise<{ response: R; events: TrailEntry[] }> {
    const mark = await this.mark();
    const response = await write();
    const sequence = response.details?.sequence;
    expect(sequence, "the write answers the sequence of its last event").toBeGreaterThan(mark);
    const events = await this.since(mark, typeof filter === "function" ? filter(response) : filter, sequence, protocol);
    return { response, events };
  }

  /** The events of `filter` that `record` would see for several writes at once (e.g. every member aggregate). */
  async all(filter: TrailFilter, protocol: Protocol = "connect-json-http1"): Promise<Event[]> {
    return (await this.events(protocol).listEvents({ ...filter, pageSize: 1000 })).events;
  }
}

/** The id under `key` in the payload of the one event of `type` (e.g. the outboxId of user.notification.queued); fails unless it is a non-empty string. */
export function idIn(events: TrailEntry[], type: string, key: string): string {
  const matching = events.filter((event) => event.type === type);
  expect(matching, `one ${type} event`).toHaveLength(1);
  const id = matching[0]?.payload?.[key];
  if (typeof id !== "string" || !/^\S+$/.test(id)) expect.fail(`${type} names its ${key}: ${JSON.stringify(id)}`);
  return id;
}

/** Asserts `events` are exactly `expected`, in any order (the order of events within one write is no rule). */
export function expectExactly(events: TrailEntry[], expected: TrailEntry[]): void {
  expect(events).toHaveLength(expected.length);
  expect(events).toEqual(expect.arrayContaining(expected));
}

/** The instance's id (GetInstance). */
export async function instanceIdOf(clients: Clients, adminToken: string): Promise<string> {
  return (await clients.client(InstanceService, "connect-json-http1", { token: adminToken }).getInstance({})).instanceId;
}

/** A new organization with an ORG_OWNER machine user of its own, both named after `name`. */
export async function orgWithOwner(clients: Clients, adminToken: string, name: string): Promise<{ orgId: string; owner: Actor }> {
  const { organizationId: orgId } = await clients.client(OrganizationService, "connect-json-http1", { token: adminToken }).createOrganization({ name });
  const owner = await createActor(clients, adminToken, orgId, `${name}-owner`, ["ORG_OWNER"]);
  return { orgId, owner };
}

/** A machine user of the default organization holding IAM_OWNER (and nothing else). */
export async function instanceOwner(clients: Clients, adminToken: string, userName: string): Promise<Actor> {
  const instance = await clients.client(InstanceService, "connect-json-http1", { token: adminToken }).getInstance({});
  const actor = await createActor(clients, adminToken, instance.defaultOrganizationId, userName);
  await clients.client(InstanceService, "connect-json-http1", { token: adminToken }).addInstanceMember({ userId: actor.userId, roles: ["IAM_OWNER"] });
  return actor;
}

/** The RFC 3339 form the payloads use for an event's own time plus `ms`. */
export function isoAfter(event: Event | undefined, ms: number): string {
  if (!event?.creationDate) throw new Error("an event with a creation date is needed");
  return new Date(timestampDate(event.creationDate).getTime() + ms).toISOString();
}
