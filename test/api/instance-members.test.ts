import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/** ListInstanceMembers and RemoveInstanceMember (issue 16): never the last IAM_OWNER. */
const t = useTestServer();
let defaultOrg: string;
let adminId: string;
let n = 0;

const instance = (protocol: Protocol = "connect-json-http1", token = t.server.adminToken) => t.clients.client(InstanceService, protocol, { token });
const newActor = () => createActor(t.clients, t.server.adminToken, defaultOrg, `instance-members-${++n}`);
const withRoles = async (roles: string[]) => {
  const actor = await newActor();
  await instance().addInstanceMember({ userId: actor.userId, roles });
  return actor;
};
function rawInstanceMembers(): string[] {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT user_id FROM memberships WHERE level = 'instance' ORDER BY rowid").all() as { user_id: string }[]).map((row) => row.user_id);
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  const got = await instance().getInstance({});
  defaultOrg = got.defaultOrganizationId;
  adminId = (await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken }).listUsers({ userName: "admin" })).users[0]!.userId;
});

describe.each(PROTOCOLS)("instance members over %s", (protocol) => {
  it("lists the members with their roles, paged; removing one takes its instance rights at once, with an event", async () => {
    const viewer = await withRoles(["IAM_OWNER_VIEWER"]);
    const client = instance(protocol);
    const members: { userId: string; roles: string[] }[] = [];
    let pageToken = "";
    do {
      const page = await client.listInstanceMembers({ pageSize: 1, pageToken });
      expect(page.details?.totalResult).toBe(BigInt(rawInstanceMembers().length));
      members.push(...page.members.map(({ userId, roles }) => ({ userId, roles })));
      pageToken = page.details!.nextPageToken;
    } while (pageToken);
    expect(members.map((member) => member.userId)).toEqual(rawInstanceMembers());
    expect(members[0]).toEqual({ userId: adminId, roles: ["IAM_OWNER"] });
    expect(members.at(-1)).toEqual({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });

    await instance(protocol, viewer.token).getInstance({});
    const { details } = await client.removeInstanceMember({ userId: viewer.userId });
    expect(details?.resourceOwner).toBe((await client.getInstance({})).instanceId);
    expect(await failure(instance(protocol, viewer.token).getInstance({}))).toMatchObject({ code: Code.PermissionDenied });
    expect(rawInstanceMembers()).not.toContain(viewer.userId);
    const events = await t.clients.client(EventService, protocol, { token: t.server.adminToken }).listEvents({ aggregateType: "member", fromSequence: details!.sequence });
    expect(events.events.map((event) => [event.eventType, event.payload?.["userId"]])).toEqual([["instance.member.removed", viewer.userId]]);

    expect(await failure(client.removeInstanceMember({ userId: viewer.userId }))).toMatchObject({ code: Code.NotFound, reason: "member.not_found" });
  });

  it("never removes the last IAM_OWNER (member.last_owner), but one of two may go", async () => {
    const client = instance(protocol);
    const second = await withRoles(["IAM_OWNER"]);
    expect(rawInstanceMembers().filter((id) => id === adminId || id === second.userId)).toHaveLength(2);
    await instance(protocol, second.token).removeInstanceMember({ userId: second.userId });
    // Now the bootstrap admin is the only IAM_OWNER left.
    expect(await failure(client.removeInstanceMember({ userId: adminId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "member.last_owner" });
    expect(rawInstanceMembers()).toContain(adminId);
    await client.getInstance({});
  });
});

describe("who may list and remove instance members", () => {
  it("iam.read lists (the viewer may), iam.member.write removes (the viewer may not); an organization owner does neither", async () => {
    const viewer = await withRoles(["IAM_OWNER_VIEWER"]);
    const other = await withRoles(["IAM_OWNER_VIEWER"]);
    const orgOwner = await createActor(t.clients, t.server.adminToken, defaultOrg, `instance-members-owner-${++n}`, ["ORG_OWNER"]);
    expect((await instance("grpc-h2c", viewer.token).listInstanceMembers({})).members.map((member) => member.userId)).toContain(other.userId);
    expect(await failure(instance("grpc-h2c", viewer.token).removeInstanceMember({ userId: other.userId }))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(instance("grpc-web-http1", orgOwner.token).listInstanceMembers({}))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(instance("grpc-web-http1", orgOwner.token).removeInstanceMember({ userId: other.userId }))).toMatchObject({ code: Code.PermissionDenied });
    expect(rawInstanceMembers()).toContain(other.userId);
  });
});
