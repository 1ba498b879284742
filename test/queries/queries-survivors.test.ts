import { Code } from "@connectrpc/connect";
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

// Read rules of src/queries: what a not_found names (its metadata), that an id from another project is not found
// in this one, that an instance-wide reader's x-service-orgid narrows the audit trail to that organization, that
// page tokens are only the ones the server issued, that only-white-space filters are no filters and surrounding
// white space of a filter is ignored, which projects a project owner lists, and the issuer of a token Gatehouse made.
const t = useTestServer();
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const admin = (orgId?: string) => ({ token: t.server.adminToken, ...(orgId ? { orgId } : {}) });

let orgA = "";
let orgB = "";
beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", admin());
  orgA = (await orgs.createOrganization({ name: unique("Queries A") })).organizationId;
  orgB = (await orgs.createOrganization({ name: unique("Queries B") })).organizationId;
});

describe("not_found names the id it did not find", () => {
  it("GetApplication: application.not_found with the appId, also for an app of another project", async () => {
    const projects = t.clients.client(ProjectService, "connect-json-http1", admin(orgA));
    const { projectId: p1 } = await projects.createProject({ name: unique("P1") });
    const { projectId: p2 } = await projects.createProject({ name: unique("P2") });
    const apps = t.clients.client(ApplicationService, "connect-json-http1", admin(orgA));
    const { appId } = await apps.createOidcApplication({ projectId: p1, name: "Web", redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
    expect((await apps.getApplication({ projectId: p1, appId })).app?.appId).toBe(appId);
    const elsewhere = await failure(apps.getApplication({ projectId: p2, appId }));
    expect(elsewhere).toMatchObject({ code: Code.NotFound, reason: "application.not_found", metadata: { appId } });
    const unknown = await failure(apps.getApplication({ projectId: p1, appId: "no-such-app" }));
    expect(unknown).toMatchObject({ code: Code.NotFound, reason: "application.not_found", metadata: { appId: "no-such-app" } });
  });

  it("GetIdentityProvider: idp.not_found with the idpId", async () => {
    const idps = t.clients.client(IdentityProviderService, "connect-json-http1", admin(orgA));
    expect(await failure(idps.getIdentityProvider({ idpId: "no-such-idp" }))).toMatchObject({ code: Code.NotFound, reason: "idp.not_found", metadata: { idpId: "no-such-idp" } });
  });

  it("GetUser: user.not_found with the userId, also for a user of another organization", async () => {
    const users = t.clients.client(UserService, "connect-json-http1", admin(orgA));
    const { userId } = await t.clients.client(UserService, "connect-json-http1", admin(orgB)).createMachineUser({ userName: unique("other-org-bot"), name: "Bot" });
    expect(await failure(users.getUser({ userId }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found", metadata: { userId } });
    expect(await failure(users.getUser({ userId: "no-such-user" }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found", metadata: { userId: "no-such-user" } });
  });
});

describe("the audit trail of an instance-wide reader", () => {
  it("is every organization's without x-service-orgid, and only the selected organization's with it", async () => {
    const { organizationId: orgX } = await t.clients.client(OrganizationService, "connect-json-http1", admin()).createOrganization({ name: unique("Events X") });
    const { organizationId: orgY } = await t.clients.client(OrganizationService, "connect-json-http1", admin()).createOrganization({ name: unique("Events Y") });
    const inX = await t.clients.client(UserService, "connect-json-http1", admin(orgX)).createMachineUser({ userName: unique("x-bot"), name: "X" });
    const inY = await t.clients.client(UserService, "connect-json-http1", admin(orgY)).createMachineUser({ userName: unique("y-bot"), name: "Y" });
    const from = inX.details!.sequence;
    const all = await t.clients.client(EventService, "connect-json-http1", admin()).listEvents({ fromSequence: from, aggregateType: "user" });
    expect(all.events.map((e) => e.aggregateId)).toEqual(expect.arrayContaining([inX.userId, inY.userId]));
    const narrowed = await t.clients.client(EventService, "connect-json-http1", admin(orgX)).listEvents({ fromSequence: from, aggregateType: "user" });
    expect(narrowed.events.map((e) => e.aggregateId)).toContain(inX.userId);
    expect(narrowed.events.map((e) => e.aggregateId)).not.toContain(inY.userId);
    expect(new Set(narrowed.events.map((e) => e.resourceOwner))).toEqual(new Set([orgX]));
    expect(Number(narrowed.details?.totalResult)).toBe(narrowed.events.length);
  });
});

describe("page tokens", () => {
  const forged = (text: string) => Buffer.from(text).toString("base64url");
  it.each([["xseq:1"], ["seq:1x"], ["seq:1\n"], [" seq:1"], ["seq:"], ["seq:1234567890123456"]])("a token that stands for %j is invalid_argument page_token.invalid on page_token", async (text) => {
    const users = t.clients.client(UserService, "connect-json-http1", admin(orgA));
    const error = await failure(users.listUsers({ pageToken: forged(text) }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "page_token.invalid", fields: ["page_token"], rules: ["page_token.invalid"] });
  });

  it("the tokens the server issues lead through the whole list", async () => {
    const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", admin()).createOrganization({ name: unique("Paging") });
    const users = t.clients.client(UserService, "connect-json-http1", admin(organizationId));
    const created: string[] = [];
    for (let i = 0; i < 3; i++) created.push((await users.createMachineUser({ userName: unique(`page-${i}`), name: "P" })).userId);
    const first = await users.listUsers({ pageSize: 2 });
    const second = await users.listUsers({ pageSize: 2, pageToken: first.details!.nextPageToken });
    expect([...first.users, ...second.users].map((u) => u.userId)).toEqual(expect.arrayContaining(created));
    expect(second.details?.nextPageToken).toBe("");
  });
});

describe("filters of lists", () => {
  it("ListOrganizations: surrounding white space of the name is ignored; only white space is no filter", async () => {
    const name = unique("Trimmed Org");
    const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", admin()).createOrganization({ name });
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", admin());
    expect((await orgs.listOrganizations({ name: `  ${name}\t` })).organizations.map((o) => o.organizationId)).toEqual([organizationId]);
    const blank = await orgs.listOrganizations({ name: "   ", pageSize: 1 });
    expect(blank.organizations).toHaveLength(1);
    expect(blank.details?.totalResult).toBe((await orgs.listOrganizations({ pageSize: 1 })).details?.totalResult);
  });

  it("ListProjects: surrounding white space of the name is ignored; only white space is no filter", async () => {
    const projects = t.clients.client(ProjectService, "connect-json-http1", admin(orgB));
    const name = unique("Trimmed Project");
    const { projectId } = await projects.createProject({ name });
    expect((await projects.listProjects({ name: ` ${name}  ` })).projects.map((p) => p.projectId)).toEqual([projectId]);
    const blank = await projects.listProjects({ name: "  " });
    expect(blank.projects.map((p) => p.projectId)).toContain(projectId);
  });

  it("ListUsers: surrounding white space of the email is ignored", async () => {
    const users = t.clients.client(UserService, "connect-json-http1", admin(orgB));
    const userName = unique("trim-mail");
    const { userId } = await users.createHumanUser({ userName, profile: { firstName: "T", lastName: "M" }, email: { email: `${userName}@example.com` } });
    expect((await users.listUsers({ email: `  ${userName}@Example.com ` })).users.map((u) => u.userId)).toEqual([userId]);
  });
});

describe("ListProjects of a project owner", () => {
  it("lists only the projects it owns in the selected organization; with none there it is permission_denied naming project.read", async () => {
    const projects = t.clients.client(ProjectService, "connect-json-http1", admin(orgA));
    const { projectId: owned } = await projects.createProject({ name: unique("Owned") });
    const { projectId: other } = await projects.createProject({ name: unique("Not owned") });
    const { projectId: inB } = await t.clients.client(ProjectService, "connect-json-http1", admin(orgB)).createProject({ name: unique("In B") });
    const owner = await createActor(t.clients, t.server.adminToken, orgB, unique("powner"));
    await projects.addProjectMember({ projectId: owned, userId: owner.userId, roles: ["PROJECT_OWNER"] });
    const listed = await t.clients.client(ProjectService, "connect-json-http1", { token: owner.token, orgId: orgA }).listProjects({});
    expect(listed.projects.map((p) => p.projectId)).toEqual([owned]);
    expect(Number(listed.details?.totalResult)).toBe(1);
    expect(listed.projects.map((p) => p.projectId)).not.toContain(other);

    // A project owner in org B (not in org A) lists nothing in org A: refused like any caller without the permission.
    const ownerInB = await createActor(t.clients, t.server.adminToken, orgA, unique("powner-b"));
    await t.clients.client(ProjectService, "connect-json-http1", admin(orgB)).addProjectMember({ projectId: inB, userId: ownerInB.userId, roles: ["PROJECT_OWNER"] });
    const refused = await failure(t.clients.client(ProjectService, "connect-json-http1", { token: ownerInB.token, orgId: orgA }).listProjects({}));
    expect(refused).toMatchObject({ code: Code.PermissionDenied, metadata: { permission: "project.read" } });
    const inOwnOrg = await t.clients.client(ProjectService, "connect-json-http1", { token: ownerInB.token, orgId: orgB }).listProjects({});
    expect(inOwnOrg.projects.map((p) => p.projectId)).toEqual([inB]);
  });
});

describe("personal access tokens", () => {
  it("a token Gatehouse issued itself (the bootstrap admin's) has an empty issuer; one a caller added names that caller", async () => {
    const events = await t.clients.client(EventService, "connect-json-http1", admin()).listEvents({ aggregateType: "user", pageSize: 1 });
    const adminId = events.events[0]!.aggregateId;
    const users = t.clients.client(UserService, "connect-json-http1", admin());
    const { tokens } = await users.listPersonalAccessTokens({ userId: adminId });
    expect(tokens.length).toBeGreaterThan(0);
    expect(tokens[0]!.issuerId).toBe("");
    const { userId } = await users.createMachineUser({ userName: unique("issued-bot"), name: "Bot" });
    await users.addPersonalAccessToken({ userId });
    expect((await users.listPersonalAccessTokens({ userId })).tokens.map((token) => token.issuerId)).toEqual([adminId]);
  });
});
