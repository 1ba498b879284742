import { expect } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Caller, Deps } from "../../src/context.js";
import { DomainError } from "../../src/domain/errors.js";
import type { Store } from "../../src/store/store.js";
import type { ServerFixture } from "../support/server.js";
import { ownerCaller, withSlowReads } from "../support/slow-store.js";

/**
 * What the *-rules tests of src/commands share. Races are run in-process against the running server's
 * own store (reads answering late, as over a network, so two calls both read before either commits);
 * everything before and after is read back over the real protocol.
 */

/** The running server's deps, with store reads that answer a few milliseconds late. */
export const racingDeps = (t: ServerFixture): Deps => ({ ...t.server.gatehouse.deps, store: withSlowReads(t.server.gatehouse.deps.store) });

/** The bootstrap admin (IAM_OWNER) as an in-process caller, selecting `orgId`. */
export async function adminCaller(t: ServerFixture, orgId?: string): Promise<Caller> {
  const { instanceId, defaultOrganizationId } = await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({});
  const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: defaultOrganizationId });
  const admin = (await users.listUsers({ userName: "admin" })).users[0];
  if (!admin) throw new Error("the bootstrap admin exists from the start");
  return { ...ownerCaller(admin.userId, defaultOrganizationId, instanceId), requestedOrgId: orgId };
}

/** Two (or more) calls started together: how many succeeded, and the DomainErrors of the others. */
export async function race(calls: Promise<unknown>[]): Promise<{ succeeded: number; refusals: DomainError[] }> {
  const outcomes = await Promise.allSettled(calls);
  const refusals = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason as unknown] : []));
  for (const refusal of refusals) expect(refusal, "a lost race is a typed error, never an internal one").toBeInstanceOf(DomainError);
  return { succeeded: outcomes.length - refusals.length, refusals: refusals as DomainError[] };
}

/** The typed parts of a DomainError, as a client would see them after the error mapping. */
export function typed(error: DomainError) {
  expect(error.message.trim(), "the error explains itself to a person").not.toBe("");
  return { kind: error.kind, reason: error.reason, metadata: error.metadata };
}

/**
 * The server's deps, with a store whose commit fails as a busy database does (`store.busy`) after
 * `meanwhile` ran: another writer got in first. That is a store failure, not a lost conditional write.
 */
export function busyDeps(t: ServerFixture, meanwhile: () => Promise<unknown>): Deps {
  const store = t.server.gatehouse.deps.store;
  const failing = new Proxy(store, {
    get(target, property, receiver) {
      if (property === "commit") {
        return async () => {
          await meanwhile();
          throw new DomainError("unavailable", "store.busy", "the database is busy; retry");
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as Store;
  return { ...t.server.gatehouse.deps, store: failing };
}

/**
 * The server's deps, with a store whose `before` method (the commit unless named) first lets `meanwhile`
 * run to the end (another call, over the API) and then answers for real: the other call landed between
 * this one's earlier reads and that step. `meanwhile` runs once.
 */
export function interleavedDeps(t: ServerFixture, meanwhile: () => Promise<unknown>, before: keyof Store = "commit"): Deps {
  let pending: (() => Promise<unknown>) | undefined = meanwhile;
  const store = t.server.gatehouse.deps.store;
  const interleaved = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (property !== before) return bound;
      return async (...args: unknown[]) => {
        const other = pending;
        pending = undefined;
        await other?.();
        return bound(...args);
      };
    },
  }) as Store;
  return { ...t.server.gatehouse.deps, store: interleaved };
}

/** The event types of one aggregate, oldest first, read through EventService. */
export async function eventTypesOf(t: ServerFixture, aggregateType: string, aggregateId: string): Promise<string[]> {
  const events = t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });
  const page = await events.listEvents({ aggregateType, aggregateId, pageSize: 1000 });
  return page.events.map((event) => event.eventType);
}
