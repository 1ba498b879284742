import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";
import { lastSequence } from "../support/event-log.js";

/** RemoveUser (issue 16): the user and everything that refers to it go, in one transaction, with events. */
const t = useTestServer();
let w: World;
let n = 0;

const as = <S extends Parameters<typeof t.clients.client>[0]>(service: S, protocol: Protocol = "connect-json-http1", orgId?: string) =>
  t.clients.client(service, protocol, { token: t.server.adminToken, ...(orgId ? { orgId } : {}) });

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "remove");
});

/** Every row of the SQLite file that names `userId` in a `user_id` column (or is the user), by table. */
function rawReferences(userId: string): Record<string, number> {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'").all() as { name: string }[];
    const found: Record<string, number> = {};
    for (const { name } of tables) {
      const columns = (db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[]).map((column) => column.name);
      const column = name === "users" ? "id" : columns.includes("user_id") ? "user_id" : undefined;
      if (!column) continue;
      const { count } = db.prepare(`SELECT count(*) AS count FROM "${name}" WHERE "${column}" = ?`).get(userId) as { count: number };
      if (count > 0) found[name] = count;
    }
    return found;
  } finally {
    db.close();
  }
}

/** A human of A with a token, an IDP link, pending codes and mails, and a membership at every level. */
async function richUser() {
  const userName = `leaver-${++n}`;
  const users = as(UserService, "connect-json-http1", w.orgA);
  const { userId } = await users.createHumanUser({
    userName,
    profile: { firstName: "Lea", lastName: "Ver" },
    email: { email: `${userName}@example.com` },
    idps: [{ configId: w.idpId, externalUserId: `ext-${userName}` }],
    requestPasswordlessRegistration: true,
  });
  await users.setEmail({ userId, email: `${userName}.new@example.com` });
  const { token } = await users.addPersonalAccessToken({ userId });
  await as(InstanceService).addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] });
  await as(OrganizationService, "connect-json-http1", w.orgA).addOrganizationMember({ userId, roles: ["ORG_OWNER_VIEWER"] });
  const projects = as(ProjectService, "connect-json-http1", w.orgA);
  await projects.addProjectMember({ projectId: w.p1, userId, roles: ["PROJECT_OWNER_VIEWER"] });
  await projects.addProjectGrantMember({ projectId: w.p1, grantId: w.g1, userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
  return { userId, userName, token };
}

describe.each(PROTOCOLS)("RemoveUser over %s", (protocol) => {
  it("takes the user's tokens, codes, memberships, IDP links and queued mails with it, leaving no reference (API and raw database)", async () => {
    const user = await richUser();
    const before = rawReferences(user.userId);
    // Each kind is really there before, so its absence afterwards means something.
    expect(Object.keys(before).sort()).toEqual(["memberships", "one_time_codes", "outbox", "personal_access_tokens", "user_idp_links", "users"]);
    expect(before["memberships"]).toBe(4);
    expect(before["outbox"]).toBe(2);

    const { details } = await as(UserService, protocol, w.orgA).removeUser({ userId: user.userId });
    expect(details?.resourceOwner).toBe(w.orgA);

    expect(rawReferences(user.userId)).toEqual({});
    expect(await failure(as(UserService, protocol, w.orgA).getUser({ userId: user.userId }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
    expect(await failure(t.clients.client(UserService, protocol, { token: user.token }).getUser({ userId: user.userId }))).toMatchObject({ code: Code.Unauthenticated });
    const grantMembers = await as(ProjectService, protocol, w.orgA).listProjectGrantMembers({ projectId: w.p1, grantId: w.g1 });
    expect(grantMembers.members.map((member) => member.userId)).not.toContain(user.userId);
    // The user name is free again.
    await as(UserService, protocol, w.orgB).createMachineUser({ userName: user.userName.toUpperCase(), name: "Successor" });
  });

  it("appends one event per removed membership and per cancelled mail, then user.removed", async () => {
    const user = await richUser();
    const events = as(EventService, protocol);
    const last = await lastSequence(events);
    const { details } = await as(UserService, protocol, w.orgA).removeUser({ userId: user.userId });
    // The delivery worker may append its own (system) events meanwhile.
    const appended = (await events.listEvents({ fromSequence: last + 1n, pageSize: 1000 })).events.filter((event) => event.actor !== "system");
    expect(appended.map((event) => event.eventType).sort()).toEqual(
      [
        "instance.member.removed",
        "org.member.removed",
        "project.member.removed",
        "project.grant.member.removed",
        "notification.cancelled",
        "notification.cancelled",
        "user.removed",
      ].sort(),
    );
    // user.removed comes last: its sequence is the response's.
    expect(appended.at(-1)).toMatchObject({ eventType: "user.removed", aggregateId: user.userId, sequence: details?.sequence });
    expect(appended.filter((event) => event.aggregateType === "member").every((event) => event.payload?.["userId"] === user.userId)).toBe(true);
  });

  it("is not_found for a user removed already and for an unknown id", async () => {
    const { userId } = await createActor(t.clients, t.server.adminToken, w.orgA, `gone-${protocol}-${++n}`);
    const users = as(UserService, protocol, w.orgA);
    await users.removeUser({ userId });
    expect(await failure(users.removeUser({ userId }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
    expect(await failure(users.removeUser({ userId: "no-such-user" }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
  });
});

describe("who may remove a user", () => {
  it("needs the privilege ceiling: a user manager cannot remove an organization owner, and nothing is removed", async () => {
    const manager = await createActor(t.clients, t.server.adminToken, w.orgA, `remove-manager-${++n}`, ["ORG_USER_MANAGER"]);
    const owner = await createActor(t.clients, t.server.adminToken, w.orgA, `remove-owner-${++n}`, ["ORG_OWNER"]);
    const plain = await createActor(t.clients, t.server.adminToken, w.orgA, `remove-plain-${++n}`);
    const users = t.clients.client(UserService, "grpc-h2c", { token: manager.token, orgId: w.orgA });
    expect(await failure(users.removeUser({ userId: owner.userId }))).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
    expect(rawReferences(owner.userId)).toMatchObject({ users: 1, memberships: 1, personal_access_tokens: 1 });
    await users.removeUser({ userId: plain.userId });
    expect(rawReferences(plain.userId)).toEqual({});
  });

  it("refuses the caller itself (user.self), so nobody removes the last admin by accident", async () => {
    const owner = await createActor(t.clients, t.server.adminToken, w.orgA, `remove-self-${++n}`, ["ORG_OWNER"]);
    const users = t.clients.client(UserService, "grpc-web-http1", { token: owner.token, orgId: w.orgA });
    expect(await failure(users.removeUser({ userId: owner.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.self" });
    expect(rawReferences(owner.userId)).toMatchObject({ users: 1 });
  });

  it("answers strangers the same for an existing and an unknown user", async () => {
    const target = await createActor(t.clients, t.server.adminToken, w.orgA, `remove-target-${++n}`);
    const stranger = t.clients.client(UserService, "connect-proto-h2c", { token: w.actors.orgOwnerC.token, orgId: w.orgA });
    const existing = await failure(stranger.removeUser({ userId: target.userId }));
    const unknown = await failure(stranger.removeUser({ userId: `${target.userId.slice(0, -4)}0000` }));
    expect(existing).toMatchObject({ code: Code.PermissionDenied });
    expect(unknown).toEqual(existing);
    expect(rawReferences(target.userId)).toMatchObject({ users: 1 });
  });
});
