import { beforeAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { removeInstanceMember } from "../../src/commands/instance.js";
import { removeOrganizationMember } from "../../src/commands/organization.js";
import type { Caller } from "../../src/context.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, race, racingDeps, typed } from "./rules-support.js";

/**
 * Removing a member (instance.proto RemoveInstanceMember, organization.proto RemoveOrganizationMember):
 * a membership removed already is member.not_found, also when the other removal committed between this
 * one's reads and its commit; the instance keeps an IAM_OWNER (member.last_owner), which refuses only
 * the removal of a holder of that role; a store failure that is not a lost race reaches the caller as it is.
 */
const t = useTestServer();
let orgId: string;
let instanceId: string;
let orgCaller: Caller;
let instanceCaller: Caller;
let userCount = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Member removal rules" }));
  ({ instanceId } = await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({}));
  orgCaller = await adminCaller(t, orgId);
  instanceCaller = await adminCaller(t);
});

const orgMembers = () => t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
const instanceMembers = () => t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken });

/** A fresh user of the organization, member of it with ORG_USER_MANAGER. */
async function orgMember(): Promise<string> {
  userCount += 1;
  return (await createActor(t.clients, t.server.adminToken, orgId, `org-member-${userCount}`, ["ORG_USER_MANAGER"])).userId;
}
/** A fresh user holding `roles` on the instance. */
async function instanceMember(roles: string[]): Promise<string> {
  userCount += 1;
  const { userId } = await createActor(t.clients, t.server.adminToken, orgId, `instance-member-${userCount}`);
  await instanceMembers().addInstanceMember({ userId, roles });
  return userId;
}
const orgMemberIds = async () => (await orgMembers().listOrganizationMembers({})).members.map((m) => m.userId);
const instanceRolesOf = async (userId: string) => (await instanceMembers().listInstanceMembers({})).members.find((m) => m.userId === userId)?.roles;
const instanceMembershipOf = async (userId: string) => t.server.gatehouse.deps.store.findMembership(userId, "instance", instanceId);

describe("member removals that lose a race", () => {
  it("of two concurrent removals of an organization member one wins; the other is member.not_found naming the user", async () => {
    const userId = await orgMember();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeOrganizationMember(deps, orgCaller, { userId })));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "member.not_found", metadata: { userId } }]);
    expect(await orgMemberIds()).not.toContain(userId);
  });

  it("of two concurrent removals of an instance member (not an owner) one wins; the other is member.not_found, not last_owner", async () => {
    const userId = await instanceMember(["IAM_OWNER_VIEWER"]);
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeInstanceMember(deps, instanceCaller, { userId })));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "member.not_found", metadata: { userId } }]);
    expect(await instanceRolesOf(userId)).toBeUndefined();
  });

  it("of two concurrent removals of one of several IAM_OWNERs one wins; the other is member.not_found, not last_owner", async () => {
    const userId = await instanceMember(["IAM_OWNER"]);
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeInstanceMember(deps, instanceCaller, { userId })));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "member.not_found", metadata: { userId } }]);
    expect(await instanceRolesOf(userId)).toBeUndefined();
  });

  it("a removal that finds the member removed and added again since its reads is aborted (retry), and the new membership stays", async () => {
    const userId = await orgMember();
    const deps = interleavedDeps(t, async () => {
      await orgMembers().removeOrganizationMember({ userId });
      await orgMembers().addOrganizationMember({ userId, roles: ["ORG_OWNER_VIEWER"] });
    });
    const error = await removeOrganizationMember(deps, orgCaller, { userId }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    const { members } = await orgMembers().listOrganizationMembers({});
    expect(members.find((m) => m.userId === userId)?.roles).toEqual(["ORG_OWNER_VIEWER"]);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the organization member meanwhile", async () => {
    const userId = await orgMember();
    const deps = busyDeps(t, () => orgMembers().removeOrganizationMember({ userId }));
    const error = await removeOrganizationMember(deps, orgCaller, { userId }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });

  it("reaches the caller as store.busy, not as last_owner or not_found, for an instance member removed meanwhile", async () => {
    const userId = await instanceMember(["IAM_OWNER"]);
    const deps = busyDeps(t, () => instanceMembers().removeInstanceMember({ userId }));
    const error = await removeInstanceMember(deps, instanceCaller, { userId }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });

  it("reaches the caller as store.busy for an instance member still there, and the member keeps its roles", async () => {
    const userId = await instanceMember(["IAM_OWNER_VIEWER"]);
    const deps = busyDeps(t, async () => undefined);
    const error = await removeInstanceMember(deps, instanceCaller, { userId }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
    expect(await instanceRolesOf(userId)).toEqual(["IAM_OWNER_VIEWER"]);
  });
});

describe("the instance keeps an IAM_OWNER", () => {
  it("removing an owner while another remains succeeds, with instance.member.removed", async () => {
    const userId = await instanceMember(["IAM_OWNER", "IAM_OWNER_VIEWER"]);
    const membership = await instanceMembershipOf(userId);
    await removeInstanceMember(t.server.gatehouse.deps, instanceCaller, { userId });
    expect(await instanceRolesOf(userId)).toBeUndefined();
    expect(await eventTypesOf(t, "member", membership!.id)).toEqual(["instance.member.added", "instance.member.removed"]);
  });
});

/**
 * An instance whose last IAM_OWNER is gone (what `gatehouse recover-admin` repairs): the guard protects
 * holders of the role only, so the other members can still be removed.
 */
describe("an instance without any IAM_OWNER", () => {
  const bare = useTestServer();

  it("still lets a member that does not hold IAM_OWNER be removed", async () => {
    const caller = await adminCaller(bare);
    const admin = bare.clients.client(InstanceService, "connect-json-http1", { token: bare.server.adminToken });
    const { userId: viewerId } = await createActor(bare.clients, bare.server.adminToken, caller.principal.orgId, "viewer-without-owner");
    await admin.addInstanceMember({ userId: viewerId, roles: ["IAM_OWNER_VIEWER"] });
    const store = bare.server.gatehouse.deps.store;
    const owners = await store.listMembershipsOfScope("instance", caller.principal.instanceId);
    const ownerships = owners.filter((m) => m.roles.includes("IAM_OWNER"));
    expect(ownerships.map((m) => m.userId)).toEqual([caller.principal.userId]);
    // Out of band, as a restored or hand-edited database may be: nobody holds IAM_OWNER any more.
    await store.commit({ instanceId: caller.principal.instanceId, actor: "test", at: new Date(), writes: ownerships.map((m) => ({ kind: "membership.delete" as const, id: m.id })), events: [] });
    const before = (await store.listEvents({ limit: 100_000 })).at(-1)!.sequence;

    await removeInstanceMember(bare.server.gatehouse.deps, caller, { userId: viewerId });

    expect(await store.findMembership(viewerId, "instance", caller.principal.instanceId)).toBeUndefined();
    const appended = await store.listEvents({ afterSequence: before, limit: 10 });
    expect(appended.map((event) => [event.type, event.aggregateType, event.payload])).toEqual([
      ["instance.member.removed", "member", expect.objectContaining({ userId: viewerId, roles: ["IAM_OWNER_VIEWER"] })],
    ]);
  });
});
