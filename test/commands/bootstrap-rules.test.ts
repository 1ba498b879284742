import { beforeEach, describe, expect, it } from "vitest";
import type { Event } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService, OrganizationState } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { expectExactly, type TrailEntry, trailEntry } from "../support/audit-trail.js";
import { useTestServer } from "../support/server.js";

/**
 * What the first start creates (README "bootstraps", API.md "Identity"): the instance, a first
 * organization that is its default one, and an active admin machine user "admin" holding IAM_OWNER
 * and ORG_OWNER there; also the instance's password policy, the default one of API.md. Read back
 * over the API (and the policy from the store, which no RPC shows) and compared with what the
 * bootstrap's own events (from sequence 1, actor system) announce.
 */
const anId = expect.stringMatching(/^\S+$/);
// A fresh server per test: the bootstrap then runs inside each test, where mutation testing sees who checks it.
const t = useTestServer({ perTest: true });
let instanceId: string;
let defaultOrgId: string;
let bootstrap: Event[];
const eventOf = (type: string) => {
  const event = bootstrap.find((e) => e.eventType === type);
  if (!event) throw new Error(`the bootstrap appends ${type}`);
  return event;
};
let adminId: string;

beforeEach(async () => {
  const token = t.server.adminToken;
  ({ instanceId, defaultOrganizationId: defaultOrgId } = await t.clients.client(InstanceService, "connect-json-http1", { token }).getInstance({}));
  ({ events: bootstrap } = await t.clients.client(EventService, "connect-json-http1", { token }).listEvents({ fromSequence: 1n, pageSize: 7 }));
  expect(new Set(bootstrap.map((e) => e.actor))).toEqual(new Set(["system"]));
  adminId = eventOf("user.machine.added").aggregateId;
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: defaultOrgId });

describe("the bootstrap", () => {
  it("creates the default organization active, named as org.added says", async () => {
    expect(eventOf("org.added").aggregateId).toBe(defaultOrgId);
    const { organization } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).getOrganization({ organizationId: defaultOrgId });
    expect(organization).toMatchObject({ organizationId: defaultOrgId, name: eventOf("org.added").payload?.["name"], state: OrganizationState.ACTIVE });
  });

  it("creates the admin as an active machine user \"admin\" of the default organization, named as user.machine.added says, described as holding both roles", async () => {
    const { user } = await users().getUser({ userId: adminId });
    expect(user).toMatchObject({ userId: adminId, userName: "admin", state: UserState.ACTIVE });
    expect(user?.details?.resourceOwner).toBe(defaultOrgId);
    expect(user?.type.case).toBe("machine");
    const machine = user?.type.case === "machine" ? user.type.value : undefined;
    expect(machine?.name).toBe(eventOf("user.machine.added").payload?.["name"]);
    expect(machine?.name).not.toBe("");
    expect(machine?.description).toMatch(/IAM_OWNER/);
    expect(machine?.description).toMatch(/ORG_OWNER/);
  });

  it("makes the admin ORG_OWNER of the default organization and IAM_OWNER of the instance, and nobody else a member", async () => {
    const orgMembers = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId: defaultOrgId }).listOrganizationMembers({});
    expect(orgMembers.members.map((m) => ({ userId: m.userId, roles: m.roles }))).toEqual([{ userId: adminId, roles: ["ORG_OWNER"] }]);
    const instanceMembers = await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).listInstanceMembers({});
    expect(instanceMembers.members.map((m) => ({ userId: m.userId, roles: m.roles }))).toEqual([{ userId: adminId, roles: ["IAM_OWNER"] }]);
  });

  it("gives the instance the default password policy (8 characters, upper, lower, digit, symbol), the one instance.password_policy.added announces", async () => {
    const policy = await t.server.gatehouse.deps.store.getPasswordPolicy(instanceId);
    const announced = eventOf("instance.password_policy.added").payload;
    expect(policy).toMatchObject({ minLength: 8, requireUppercase: true, requireLowercase: true, requireDigit: true, requireSymbol: true });
    expect(policy).toMatchObject(announced!);
  });

  it("logs which instance, default organization and admin user it created, with the token file (never the token)", () => {
    const logged = t.server.logs.parsed().filter((line) => typeof line["tokenFile"] === "string");
    expect(logged).toHaveLength(1);
    const values = Object.values(logged[0]!);
    expect(values).toEqual(expect.arrayContaining([instanceId, defaultOrgId, adminId]));
    expect(JSON.stringify(logged[0])).not.toContain(t.server.adminToken.split(".")[2]);
  });
});

describe("audit trail: bootstrap", () => {
  it("the first start appends the instance, its password policy, the first organization, the admin with its roles and token, all as system", async () => {
    const events = t.clients.client(EventService, "grpc-h2c", { token: t.server.adminToken });
    const instance = await t.clients.client(InstanceService, "grpc-h2c", { token: t.server.adminToken }).getInstance({});
    const { events: first } = await events.listEvents({ fromSequence: 1n, pageSize: 7 });
    const adminId = first.find((event) => event.eventType === "user.machine.added")?.aggregateId ?? "";
    const tokenId = t.server.adminToken.split(".")[1] ?? "";
    const system = (type: string, aggregateType: string, aggregateId: string, resourceOwner: string, payload: TrailEntry["payload"]): TrailEntry => ({
      type,
      aggregateType,
      aggregateId,
      resourceOwner,
      actor: "system",
      payload,
    });
    const orgId = instance.defaultOrganizationId;
    expectExactly(first.map(trailEntry), [
      system("instance.added", "instance", instance.instanceId, instance.instanceId, { name: instance.name }),
      system("instance.password_policy.added", "instance", instance.instanceId, instance.instanceId, {
        minLength: 8,
        requireUppercase: true,
        requireLowercase: true,
        requireDigit: true,
        requireSymbol: true,
      }),
      system("org.added", "org", orgId, orgId, { name: "Gatehouse" }),
      system("user.machine.added", "user", anId, orgId, { userName: "admin", name: "Administrator" }),
      system("instance.member.added", "member", anId, instance.instanceId, { userId: adminId, roles: ["IAM_OWNER"], level: "instance", scopeId: instance.instanceId }),
      system("org.member.added", "member", anId, orgId, { userId: adminId, roles: ["ORG_OWNER"], level: "org", scopeId: orgId }),
      system("user.pat.added", "user", adminId, orgId, { tokenId, expirationDate: null }),
    ]);
    expect(instance.name).toBe("Gatehouse");
    expect(JSON.stringify(first.map((event) => event.payload))).not.toContain(t.server.adminToken.split(".")[2]);
  });
});
