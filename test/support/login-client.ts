import { readFileSync } from "node:fs";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Protocol } from "./clients.js";
import type { ServerFixture } from "./server.js";
import { storedRow } from "./stored-rows.js";
import { type Actor, createActor } from "./world.js";

/** Hashes made by implementations independent of Gatehouse (test/fixtures/password-hashes), all of one password. */
export const importedHashes = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};

/** A machine user of `orgId` holding the instance role IAM_LOGIN_CLIENT, with a token: what a login front end runs as. */
export async function createLoginClient(t: ServerFixture, orgId: string, userName: string): Promise<Actor> {
  const actor = await createActor(t.clients, t.server.adminToken, orgId, userName);
  await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).addInstanceMember({ userId: actor.userId, roles: ["IAM_LOGIN_CLIENT"] });
  return actor;
}

/** UserService as `actor` over `protocol`. */
export const usersAs = (t: ServerFixture, actor: { token: string }, protocol: Protocol = "connect-json-http1", orgId?: string) =>
  t.clients.client(UserService, protocol, { token: actor.token, ...(orgId ? { orgId } : {}) });

/** What the database holds of a user's password: the hash and the count of wrong passwords in a row. */
export async function storedPassword(t: ServerFixture, userId: string): Promise<{ hash: string | null; failedAttempts: number }> {
  const row = await storedRow<{ password_hash: string | null; failed_password_attempts: number | string }>(
    t.server,
    "select password_hash, failed_password_attempts from users where id = ?",
    userId,
  );
  return { hash: row.password_hash, failedAttempts: Number(row.failed_password_attempts) };
}

/** The events of one aggregate, oldest first: type and payload (as JSON values). */
export async function eventsOf(t: ServerFixture, aggregateType: string, aggregateId: string) {
  const { events } = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateType, aggregateId, pageSize: 1000 });
  return events.map((event) => ({ type: event.eventType, payload: (event.payload ?? {}) as Record<string, unknown>, actor: event.actor }));
}

/** A default argon2id as Gatehouse writes it (19 MiB, 2 iterations, 1 lane, version 19). */
export const DEFAULT_ARGON2ID = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;
