import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService, OrganizationState } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/** ListOrganizations, ListOrganizationMembers and RemoveOrganizationMember (issue 16). */
const t = useTestServer();
let n = 0;

const orgs = (protocol: Protocol = "connect-json-http1", options: { token?: string; orgId?: string } = {}) =>
  t.clients.client(OrganizationService, protocol, { token: options.token ?? t.server.adminToken, ...(options.orgId ? { orgId: options.orgId } : {}) });
const newOrg = async (name = `Members Org ${++n}`) => (await orgs().createOrganization({ name })).organizationId;
const newActor = (orgId: string, roles: string[] = []) => createActor(t.clients, t.server.adminToken, orgId, `org-members-${++n}`, roles);
/** Membership rows of `userId` in the raw SQLite file, by level. */
function rawMemberships(userId: string): string[] {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT level, scope_id FROM memberships WHERE user_id = ? ORDER BY rowid").all(userId) as { level: string; scope_id: string }[]).map(
      (row) => `${row.level}:${row.scope_id}`,
    );
  } finally {
    db.close();
  }
}

describe.each(PROTOCOLS)("ListOrganizations over %s", (protocol) => {
  it("pages through every organization in creation order with a total, filters by a part of the name and by state", async () => {
    const tag = `Zebra${protocol.replace(/\W/g, "")}`;
    const created = [await newOrg(`${tag} One`), await newOrg(`x ${tag.toUpperCase()} Two`), await newOrg(`${tag} Three`)];
    await orgs().deactivateOrganization({ organizationId: created[1]! });
    const client = orgs(protocol);

    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await client.listOrganizations({ pageSize: 2, pageToken, name: tag.toLowerCase() });
      expect(page.details?.totalResult).toBe(3n);
      expect(page.organizations.length).toBeLessThanOrEqual(2);
      seen.push(...page.organizations.map((org) => org.organizationId));
      pageToken = page.details!.nextPageToken;
    } while (pageToken);
    expect(seen).toEqual(created);

    const inactive = await client.listOrganizations({ name: tag, state: OrganizationState.INACTIVE });
    expect(inactive.organizations.map((org) => [org.organizationId, org.state])).toEqual([[created[1], OrganizationState.INACTIVE]]);
    const active = await client.listOrganizations({ name: tag, state: OrganizationState.ACTIVE });
    expect(active.details?.totalResult).toBe(2n);
    expect(active.organizations[0]?.details?.resourceOwner).toBe(created[0]);
    // `%` is a plain character, not a wildcard.
    expect((await client.listOrganizations({ name: `${tag}%` })).details?.totalResult).toBe(0n);
    expect(await failure(client.listOrganizations({ pageToken: "forged" }))).toMatchObject({ code: Code.InvalidArgument, reason: "page_token.invalid" });
  });
});

describe("who may list organizations", () => {
  it("needs iam.read: the instance viewer may, an organization owner may not", async () => {
    const orgId = await newOrg();
    const viewer = await newActor(orgId);
    await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).addInstanceMember({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });
    const owner = await newActor(orgId, ["ORG_OWNER"]);
    expect((await orgs("grpc-h2c", { token: viewer.token }).listOrganizations({})).organizations.map((org) => org.organizationId)).toContain(orgId);
    expect(await failure(orgs("grpc-h2c", { token: owner.token }).listOrganizations({}))).toMatchObject({ code: Code.PermissionDenied });
  });
});

describe.each(PROTOCOLS)("organization members over %s", (protocol) => {
  it("lists the members with their roles, paged; removing one takes its roles at once, with an event, and leaves no row", async () => {
    const orgId = await newOrg();
    const owner = await newActor(orgId, ["ORG_OWNER"]);
    const manager = await newActor(orgId, ["ORG_USER_MANAGER"]);
    const viewer = await newActor(orgId, ["ORG_OWNER_VIEWER"]);
    const client = orgs(protocol, { token: owner.token });

    const first = await orgs(protocol, { token: viewer.token }).listOrganizationMembers({ pageSize: 2 });
    expect(first.details?.totalResult).toBe(3n);
    const second = await client.listOrganizationMembers({ pageSize: 2, pageToken: first.details!.nextPageToken });
    expect(second.details?.nextPageToken).toBe("");
    expect([...first.members, ...second.members].map((member) => [member.userId, member.roles])).toEqual([
      [owner.userId, ["ORG_OWNER"]],
      [manager.userId, ["ORG_USER_MANAGER"]],
      [viewer.userId, ["ORG_OWNER_VIEWER"]],
    ]);
    expect(first.members[0]?.details?.resourceOwner).toBe(orgId);

    const users = t.clients.client(UserService, protocol, { token: manager.token });
    await users.createMachineUser({ userName: `hired-${++n}`, name: "Hired" });
    const { details } = await client.removeOrganizationMember({ userId: manager.userId });
    expect(details?.resourceOwner).toBe(orgId);
    // Effective on the very next call: the manager's token still works, its rights are gone.
    expect(await failure(users.createMachineUser({ userName: `hired-${++n}`, name: "Hired" }))).toMatchObject({ code: Code.PermissionDenied });
    expect(rawMemberships(manager.userId)).toEqual([]);
    expect((await client.listOrganizationMembers({})).members.map((member) => member.userId)).toEqual([owner.userId, viewer.userId]);
    const events = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateType: "member", fromSequence: details!.sequence, pageSize: 10 });
    expect(events.events.map((event) => [event.eventType, event.payload?.["userId"], event.sequence])).toEqual([["org.member.removed", manager.userId, details!.sequence]]);

    expect(await failure(client.removeOrganizationMember({ userId: manager.userId }))).toMatchObject({ code: Code.NotFound, reason: "member.not_found" });
    expect(await failure(client.removeOrganizationMember({ userId: "no-such-user" }))).toMatchObject({ code: Code.NotFound, reason: "member.not_found" });
  });

  it("acts in the organization x-service-orgid selects: a member of A stays a member of B", async () => {
    const [orgA, orgB] = [await newOrg(), await newOrg()];
    const member = await newActor(orgA, ["ORG_OWNER_VIEWER"]);
    await orgs("connect-json-http1", { orgId: orgB }).addOrganizationMember({ userId: member.userId, roles: ["ORG_OWNER_VIEWER"] });
    await orgs(protocol, { orgId: orgA }).removeOrganizationMember({ userId: member.userId });
    expect(rawMemberships(member.userId)).toEqual([`org:${orgB}`]);
    expect((await orgs(protocol, { orgId: orgB }).listOrganizationMembers({})).members.map((m) => m.userId)).toEqual([member.userId]);
  });
});

describe("who may list and remove organization members", () => {
  it("org.read lists (the settings manager may), org.member.write removes (the viewer and the user manager may not)", async () => {
    const orgId = await newOrg();
    const settings = await newActor(orgId, ["ORG_SETTINGS_MANAGER"]);
    const viewer = await newActor(orgId, ["ORG_OWNER_VIEWER"]);
    const manager = await newActor(orgId, ["ORG_USER_MANAGER"]);
    expect((await orgs("grpc-web-http1", { token: settings.token }).listOrganizationMembers({})).details?.totalResult).toBe(3n);
    const plain = await newActor(orgId);
    expect(await failure(orgs("grpc-web-http1", { token: plain.token }).listOrganizationMembers({}))).toMatchObject({ code: Code.PermissionDenied });
    for (const actor of [viewer, manager, settings]) {
      expect(await failure(orgs("connect-proto-h2c", { token: actor.token }).removeOrganizationMember({ userId: viewer.userId }))).toMatchObject({
        code: Code.PermissionDenied,
      });
    }
    expect(rawMemberships(viewer.userId)).toEqual([`org:${orgId}`]);
  });

  it("a stranger gets the same answer for a member and a non-member, and learns nothing of the list", async () => {
    const [orgA, orgC] = [await newOrg(), await newOrg()];
    const member = await newActor(orgA, ["ORG_OWNER_VIEWER"]);
    const stranger = await newActor(orgC, ["ORG_OWNER"]);
    const asStranger = orgs("grpc-h2c", { token: stranger.token, orgId: orgA });
    const existing = await failure(asStranger.removeOrganizationMember({ userId: member.userId }));
    expect(existing).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(asStranger.removeOrganizationMember({ userId: `${member.userId.slice(0, -4)}0000` }))).toEqual(existing);
    expect(await failure(asStranger.listOrganizationMembers({}))).toMatchObject({ code: Code.PermissionDenied });
    expect(rawMemberships(member.userId)).toEqual([`org:${orgA}`]);
  });
});
