import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService, OrganizationState } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/** DeactivateOrganization / ReactivateOrganization (issue 16): an inactive organization's users cannot call. */
const t = useTestServer();
let defaultOrg: string;
let n = 0;

const orgs = (protocol: Protocol = "connect-json-http1", token = t.server.adminToken) => t.clients.client(OrganizationService, protocol, { token });
const newOrg = async () => (await orgs().createOrganization({ name: `Lifecycle Org ${++n}` })).organizationId;
const newActor = (orgId: string, roles: string[] = []) => createActor(t.clients, t.server.adminToken, orgId, `org-lifecycle-${++n}`, roles);
/** What `actor` gets for a call in its own organization over `protocol`: ok, or code and reason. */
async function ownCall(actor: Actor, protocol: Protocol) {
  try {
    await t.clients.client(UserService, protocol, { token: actor.token }).getUser({ userId: actor.userId });
    return "ok";
  } catch (error) {
    const { code, reason } = await failure(Promise.reject(error));
    return { code, reason };
  }
}
const orgEvents = async (orgId: string) =>
  (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateType: "org", aggregateId: orgId, pageSize: 100 })).events.map(
    (event) => event.eventType,
  );
function rawOrganization(orgId: string) {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    const org = db.prepare("SELECT state FROM organizations WHERE id = ?").get(orgId) as { state: string } | undefined;
    const { tokens } = db.prepare("SELECT count(*) AS tokens FROM personal_access_tokens t JOIN users u ON u.id = t.user_id WHERE u.org_id = ?").get(orgId) as { tokens: number };
    return { state: org?.state, tokens };
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  defaultOrg = (await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({})).defaultOrganizationId;
});

describe.each(PROTOCOLS)("organization state over %s", (protocol) => {
  it("a deactivated organization's users are refused at once (organization.inactive) and come back on reactivation, nothing deleted", async () => {
    const orgId = await newOrg();
    const [owner, plain] = [await newActor(orgId, ["ORG_OWNER"]), await newActor(orgId)];
    for (const each of PROTOCOLS) expect(await ownCall(owner, each)).toBe("ok");

    const deactivated = await orgs(protocol).deactivateOrganization({ organizationId: orgId });
    expect(deactivated.details?.resourceOwner).toBe(orgId);
    for (const actor of [owner, plain]) {
      for (const each of PROTOCOLS) expect(await ownCall(actor, each)).toEqual({ code: Code.Unauthenticated, reason: "organization.inactive" });
    }
    expect((await orgs(protocol).getOrganization({ organizationId: orgId })).organization?.state).toBe(OrganizationState.INACTIVE);
    // Nothing is revoked: the tokens are still there, which is why reactivation restores them.
    expect(rawOrganization(orgId)).toEqual({ state: "inactive", tokens: 2 });

    const reactivated = await orgs(protocol).reactivateOrganization({ organizationId: orgId });
    expect(reactivated.details!.sequence).toBeGreaterThan(deactivated.details!.sequence);
    for (const each of PROTOCOLS) expect(await ownCall(owner, each)).toBe("ok");
    expect((await orgs(protocol).getOrganization({ organizationId: orgId })).organization?.state).toBe(OrganizationState.ACTIVE);
    expect(rawOrganization(orgId)).toEqual({ state: "active", tokens: 2 });
    expect((await orgEvents(orgId)).slice(-2)).toEqual(["org.deactivated", "org.reactivated"]);
  });

  it("answers a repeated change with failed_precondition and a stable reason, appending nothing; an unknown id is not_found", async () => {
    const orgId = await newOrg();
    const client = orgs(protocol);
    expect(await failure(client.reactivateOrganization({ organizationId: orgId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.not_inactive" });
    await client.deactivateOrganization({ organizationId: orgId });
    const events = await orgEvents(orgId);
    expect(await failure(client.deactivateOrganization({ organizationId: orgId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.already_inactive" });
    expect(await orgEvents(orgId)).toEqual(events);
    expect(await failure(client.deactivateOrganization({ organizationId: "no-such-org" }))).toMatchObject({ code: Code.NotFound, reason: "organization.not_found" });
  });

  it("refuses the instance's default organization (organization.default) and the caller's own (organization.self)", async () => {
    expect(await failure(orgs(protocol).deactivateOrganization({ organizationId: defaultOrg }))).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "organization.default",
    });
    const orgId = await newOrg();
    const iamOwner = await newActor(orgId);
    await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).addInstanceMember({ userId: iamOwner.userId, roles: ["IAM_OWNER"] });
    expect(await failure(orgs(protocol, iamOwner.token).deactivateOrganization({ organizationId: orgId }))).toMatchObject({
      code: Code.FailedPrecondition,
      reason: "organization.self",
    });
    expect(rawOrganization(orgId).state).toBe("active");
    expect(rawOrganization(defaultOrg).state).toBe("active");
  });
});

describe("selecting an inactive organization", () => {
  it("only instance roles may; a project owner of another organization learns it is inactive, a stranger learns nothing", async () => {
    const orgA = await newOrg();
    const orgB = await newOrg();
    const orgC = await newOrg();
    const { projectId } = await t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId: orgA }).createProject({ name: "Inactive P" });
    const projectOwner = await newActor(orgB);
    await t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId: orgA }).addProjectMember({ projectId, userId: projectOwner.userId, roles: ["PROJECT_OWNER"] });
    const viewer = await newActor(orgB);
    await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).addInstanceMember({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });
    const stranger = await newActor(orgC, ["ORG_OWNER"]);
    const projectAs = (actor: Actor, protocol: Protocol, orgId = orgA) => t.clients.client(ProjectService, protocol, { token: actor.token, orgId });

    await projectAs(projectOwner, "grpc-h2c").getProject({ projectId });
    await orgs().deactivateOrganization({ organizationId: orgA });
    const unknownOrg = `${orgA.slice(0, -4)}0000`;
    for (const protocol of PROTOCOLS) {
      expect(await failure(projectAs(projectOwner, protocol).getProject({ projectId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.inactive" });
      // The instance role still reads into it (and could reactivate it).
      expect((await projectAs(viewer, protocol).getProject({ projectId })).project?.projectId).toBe(projectId);
      const existing = await failure(projectAs(stranger, protocol).getProject({ projectId }));
      expect(existing).toMatchObject({ code: Code.PermissionDenied, reason: "organization.access_denied" });
      expect(await failure(projectAs(stranger, protocol, unknownOrg).getProject({ projectId }))).toMatchObject({ code: existing.code, reason: existing.reason });
    }
    await orgs().reactivateOrganization({ organizationId: orgA });
    expect((await projectAs(projectOwner, "grpc-web-http1").getProject({ projectId })).project?.projectId).toBe(projectId);
  });
});

describe("who may change an organization's state", () => {
  it("needs iam.write: an owner of the organization (from another one) and the instance viewer are denied, nothing changes", async () => {
    const orgId = await newOrg();
    const foreignOwner = await newActor(defaultOrg);
    await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId }).addOrganizationMember({ userId: foreignOwner.userId, roles: ["ORG_OWNER"] });
    const viewer = await newActor(defaultOrg);
    await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).addInstanceMember({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });
    for (const [actor, protocol] of [[foreignOwner, "connect-proto-h2c"], [viewer, "grpc-web-http1"]] as const) {
      expect(await failure(orgs(protocol, actor.token).deactivateOrganization({ organizationId: orgId }))).toMatchObject({ code: Code.PermissionDenied, reason: "permission.denied" });
    }
    expect(rawOrganization(orgId).state).toBe("active");
  });
});
