import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { expect } from "vitest";
import type { Details } from "../../gen/gatehouse/admin/v1/details_pb.js";
import { type Event, EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import type { Clients } from "./clients.js";
import type { TestClock } from "./server.js";

/*
 * API.md on `details` (binding): `sequence` is the position of the last event the operation appended,
 * `change_date` that event's time, `creation_date` the object's first event's time (for a create, the
 * same time); `resource_owner` the organization the object belongs to (the instance id for SMTP and
 * instance members). The helpers below read the object's own events through ListEvents to check a
 * write's answer against exactly that.
 */

/** One object of the event log: the aggregate a write's details describe. */
export interface Aggregate {
  aggregateType: string;
  aggregateId: string;
}

/** What a write that answers details returns. */
export interface Answer {
  details?: Details;
}

/** Moves the server's clock on (no sleeping: the clock is the server's, injected) and returns the new time. */
export function later(clock: TestClock, ms = 60_000): Date {
  clock.advance(ms);
  return clock.now();
}

export function dateOf(timestamp: Timestamp | undefined): Date | undefined {
  return timestamp === undefined ? undefined : timestampDate(timestamp);
}

/** The creation date a create (or a read) answers; fails when it has none. */
export function createdAt(answer: Answer | undefined): Date {
  const date = dateOf(answer?.details?.creationDate);
  if (!date) return expect.fail("the answer carries details with a creation date");
  return date;
}

/** Every event of one object, in log order, as a caller with instance-wide `events.read` sees them. */
export async function eventsOf(clients: Clients, token: string, of: Aggregate): Promise<Event[]> {
  const { events } = await clients.client(EventService, "connect-json-http1", { token }).listEvents({ ...of, pageSize: 1000 });
  return events;
}

/** The object of `aggregateType` whose event sits at `sequence` (e.g. the membership an Add…Member created). */
export async function aggregateAt(clients: Clients, token: string, aggregateType: string, sequence: bigint | undefined): Promise<Aggregate> {
  if (sequence === undefined) return expect.fail("the write answers a sequence");
  const { events } = await clients.client(EventService, "connect-json-http1", { token }).listEvents({ aggregateType, fromSequence: sequence, pageSize: 1 });
  const event = events[0];
  expect(event?.sequence, `a ${aggregateType} event at ${sequence}`).toBe(sequence);
  return { aggregateType, aggregateId: event!.aggregateId };
}

/** What a write's details must say about the object it describes. */
export interface ExpectedDetails {
  of: Aggregate;
  /** The object's creation: its create's (or a Get's) creation date. Absent for VerifyEmail. */
  createdAt: Date | undefined;
  /** The server's clock when the write ran. */
  changedAt: Date;
  resourceOwner: string;
}

/**
 * Asserts a write's details describe `expected.of`: the sequence of the object's last event (the write's
 * own last one), its time as change date, the object's first event's time as creation date, and the owner.
 */
export async function expectDetails(clients: Clients, token: string, details: Details | undefined, expected: ExpectedDetails): Promise<void> {
  expect(details, "the write answers details").toBeDefined();
  const events = await eventsOf(clients, token, expected.of);
  const first = events[0];
  const last = events.at(-1);
  expect(
    {
      sequence: details?.sequence,
      creationDate: dateOf(details?.creationDate),
      changeDate: dateOf(details?.changeDate),
      resourceOwner: details?.resourceOwner,
    },
    `details of ${expected.of.aggregateType} ${expected.of.aggregateId}`,
  ).toEqual({ sequence: last?.sequence, creationDate: expected.createdAt, changeDate: expected.changedAt, resourceOwner: expected.resourceOwner });
  // The object's first event is its creation, its last one the write's own.
  if (expected.createdAt) expect(dateOf(first?.creationDate), "the object's first event is its creation").toEqual(expected.createdAt);
  expect(dateOf(last?.creationDate), "the object's last event is the write's").toEqual(expected.changedAt);
}

/** A change of an existing object: as expectDetails, and the change is later than the creation. */
export async function expectDetailsOfChange(clients: Clients, token: string, details: Details | undefined, expected: ExpectedDetails & { createdAt: Date }): Promise<void> {
  expect(expected.changedAt.getTime(), "the change happens after the creation").toBeGreaterThan(expected.createdAt.getTime());
  await expectDetails(clients, token, details, expected);
}
