import { describe, expect, it } from "vitest";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { AuditTrail, entriesBy, expectExactly, orgWithOwner } from "../support/audit-trail.js";
import { type Protocol, PROTOCOLS } from "../support/clients.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/*
 * The project, role, member and grant events of the catalogue at Event.payload
 * (proto/gatehouse/admin/v1/event.proto), each caused by a real call and read back through
 * ListEvents filtered to the aggregate it is about.
 */
const t = useTestServer();
const trail = () => new AuditTrail(t.clients, t.server.adminToken);
const protocolOf = (i: number): Protocol => PROTOCOLS[i % PROTOCOLS.length]!;
const anId = expect.stringMatching(/^\S+$/);

/** An organization with its owner, a partner organization to grant to, and clients acting as the owner there. */
async function setting(name: string, protocol: Protocol = "connect-json-http1") {
  const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, name);
  const { organizationId: partnerId } = await t.clients
    .client(OrganizationService, "connect-json-http1", { token: t.server.adminToken })
    .createOrganization({ name: `${name} partner` });
  const as = { token: owner.token, orgId };
  const projects = t.clients.client(ProjectService, protocol, as);
  /** An event of the owner in its organization. */
  const entry = entriesBy(owner.userId, orgId);
  return { orgId, owner, partnerId, as, projects, entry };
}

describe("audit trail: projects", () => {
  it("project.added and project.changed carry the name; project.deactivated and project.reactivated an empty payload", async () => {
    const { projects, entry, as } = await setting("trail-project");
    const project = (i: number) => t.clients.client(ProjectService, protocolOf(i), as);
    const created = await trail().record(() => project(0).createProject({ name: "Shop" }), (r) => ({ aggregateType: "project", aggregateId: r.projectId }));
    const projectId = created.response.projectId;
    const of = { aggregateType: "project", aggregateId: projectId };
    expect(created.events).toEqual([entry("project.added", "project", projectId, { name: "Shop" })]);

    expect((await trail().record(() => project(1).updateProject({ projectId, name: "Shop (EU)" }), of, protocolOf(2))).events).toEqual([
      entry("project.changed", "project", projectId, { name: "Shop (EU)" }),
    ]);
    expect((await trail().record(() => project(2).deactivateProject({ projectId }), of, protocolOf(3))).events).toEqual([entry("project.deactivated", "project", projectId, {})]);
    expect((await trail().record(() => project(3).reactivateProject({ projectId }), of)).events).toEqual([entry("project.reactivated", "project", projectId, {})]);
    expect((await projects.getProject({ projectId })).project?.name).toBe("Shop (EU)");
  });

  it("project.role.added carries key and display name; project.role.removed the key, with project.grant.changed on each grant that handed it out", async () => {
    const { projects, entry, partnerId } = await setting("trail-roles", "grpc-h2c");
    const { projectId } = await projects.createProject({ name: "Roles" });
    const of = { aggregateType: "project", aggregateId: projectId };
    const added = await trail().record(() => projects.addProjectRole({ projectId, roleKey: "viewer", displayName: "Viewer" }), of, "grpc-h2c");
    expect(added.events).toEqual([entry("project.role.added", "project", projectId, { roleKey: "viewer", displayName: "Viewer" })]);
    await projects.addProjectRole({ projectId, roleKey: "editor", displayName: "Editor" });
    const { grantId: handing } = await projects.createProjectGrant({ projectId, grantedOrganizationId: partnerId, roleKeys: ["editor", "viewer"] });

    const mark = await trail().mark();
    const { details } = await projects.removeProjectRole({ projectId, roleKey: "viewer" });
    expect(await trail().since(mark, of, details!.sequence)).toEqual([entry("project.role.removed", "project", projectId, { roleKey: "viewer" })]);
    expect(await trail().since(mark, { aggregateType: "project.grant" }, details!.sequence, "grpc-web-http1")).toEqual([
      entry("project.grant.changed", "project.grant", handing, { roleKeys: ["editor"], removedRoleKeys: ["viewer"] }),
    ]);
  });

  it("project.member.added and project.member.removed are on the membership's member aggregate: user, roles, level project, the project as scope", async () => {
    const { projects, entry, orgId } = await setting("trail-project-members", "connect-proto-h2c");
    const member = await createActor(t.clients, t.server.adminToken, orgId, "trail-project-member");
    const { projectId } = await projects.createProject({ name: "Members" });
    const payload = { userId: member.userId, roles: ["PROJECT_OWNER_VIEWER"], level: "project", scopeId: projectId };
    const added = await trail().record(() => projects.addProjectMember({ projectId, userId: member.userId, roles: ["PROJECT_OWNER_VIEWER"] }), { aggregateType: "member" }, "connect-proto-h2c");
    const membershipId = added.events[0]?.aggregateId ?? "";
    expect(added.events).toEqual([entry("project.member.added", "member", anId, payload)]);
    const removed = await trail().record(() => projects.removeProjectMember({ projectId, userId: member.userId }), { aggregateType: "member", aggregateId: membershipId });
    expect(removed.events).toEqual([entry("project.member.removed", "member", membershipId, payload)]);
  });
});

describe("audit trail: project grants", () => {
  it("project.grant.added names project, granted organization and role keys (each once); project.grant.changed the keys now and those taken away", async () => {
    const { projects, entry, partnerId } = await setting("trail-grants", "grpc-web-http1");
    const { projectId } = await projects.createProject({ name: "Granted" });
    for (const roleKey of ["a", "b", "c"]) await projects.addProjectRole({ projectId, roleKey, displayName: roleKey.toUpperCase() });
    const created = await trail().record(
      () => projects.createProjectGrant({ projectId, grantedOrganizationId: partnerId, roleKeys: ["a", "b", "a"] }),
      (r) => ({ aggregateType: "project.grant", aggregateId: r.grantId }),
      "grpc-web-http1",
    );
    const grantId = created.response.grantId;
    expect(created.events).toEqual([entry("project.grant.added", "project.grant", grantId, { projectId, grantedOrganizationId: partnerId, roleKeys: ["a", "b"] })]);

    const of = { aggregateType: "project.grant", aggregateId: grantId };
    const changed = await trail().record(() => projects.updateProjectGrant({ projectId, grantId, roleKeys: ["b", "c"] }), of);
    expect(changed.events).toEqual([entry("project.grant.changed", "project.grant", grantId, { roleKeys: ["b", "c"], removedRoleKeys: ["a"] })]);
    const widened = await trail().record(() => projects.updateProjectGrant({ projectId, grantId, roleKeys: ["a", "b", "c"] }), of, "connect-proto-h2c");
    expect(widened.events).toEqual([entry("project.grant.changed", "project.grant", grantId, { roleKeys: ["a", "b", "c"], removedRoleKeys: [] })]);
  });

  it("grant members are project_grant memberships scoped to the grant; RemoveProjectGrant takes them along, then project.grant.removed names project and organization", async () => {
    const { projects, entry, partnerId } = await setting("trail-grant-members", "grpc-h2c");
    const partnerAdmin = await createActor(t.clients, t.server.adminToken, partnerId, "trail-grant-member");
    const { projectId } = await projects.createProject({ name: "Grant members" });
    const { grantId } = await projects.createProjectGrant({ projectId, grantedOrganizationId: partnerId, roleKeys: [] });
    const payload = (roles: string[]) => ({ userId: partnerAdmin.userId, roles, level: "project_grant", scopeId: grantId });

    const first = await trail().record(() => projects.addProjectGrantMember({ projectId, grantId, userId: partnerAdmin.userId, roles: ["PROJECT_GRANT_OWNER"] }), { aggregateType: "member" });
    const firstId = first.events[0]?.aggregateId ?? "";
    expect(first.events).toEqual([entry("project.grant.member.added", "member", anId, payload(["PROJECT_GRANT_OWNER"]))]);
    const removed = await trail().record(() => projects.removeProjectGrantMember({ projectId, grantId, userId: partnerAdmin.userId }), { aggregateType: "member", aggregateId: firstId }, "connect-json-http1");
    expect(removed.events).toEqual([entry("project.grant.member.removed", "member", firstId, payload(["PROJECT_GRANT_OWNER"]))]);

    const again = await trail().record(() => projects.addProjectGrantMember({ projectId, grantId, userId: partnerAdmin.userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] }), { aggregateType: "member" });
    const againId = again.events[0]?.aggregateId ?? "";
    const mark = await trail().mark();
    const { details } = await projects.removeProjectGrant({ projectId, grantId });
    expect(await trail().since(mark, { aggregateType: "member" }, details!.sequence)).toEqual([
      entry("project.grant.member.removed", "member", againId, payload(["PROJECT_GRANT_OWNER_VIEWER"])),
    ]);
    expect(await trail().since(mark, { aggregateType: "project.grant", aggregateId: grantId }, details!.sequence, "grpc-h2c")).toEqual([
      entry("project.grant.removed", "project.grant", grantId, { projectId, grantedOrganizationId: partnerId }),
    ]);
  });

  it("RemoveProject appends a removal for everything under the project (grant members, grants, members, applications, roles), then project.removed with the name", async () => {
    const { projects, entry, partnerId, orgId, as } = await setting("trail-remove-project", "connect-proto-h2c");
    const member = await createActor(t.clients, t.server.adminToken, orgId, "trail-remove-project-member");
    const grantMember = await createActor(t.clients, t.server.adminToken, partnerId, "trail-remove-project-grant-member");
    const { projectId } = await projects.createProject({ name: "Doomed" });
    await projects.addProjectRole({ projectId, roleKey: "reader", displayName: "Reader" });
    const { grantId } = await projects.createProjectGrant({ projectId, grantedOrganizationId: partnerId, roleKeys: ["reader"] });
    const grantMembership = await trail().record(
      () => projects.addProjectGrantMember({ projectId, grantId, userId: grantMember.userId, roles: ["PROJECT_GRANT_OWNER"] }),
      { aggregateType: "member" },
    );
    const projectMembership = await trail().record(() => projects.addProjectMember({ projectId, userId: member.userId, roles: ["PROJECT_OWNER"] }), { aggregateType: "member" });
    const app = await t.clients
      .client(ApplicationService, "connect-json-http1", as)
      .createOidcApplication({ projectId, name: "Doomed web", redirectUris: ["https://doomed.example.com/cb"], authMethod: OidcAuthMethod.BASIC });

    const mark = await trail().mark();
    const { details } = await projects.removeProject({ projectId });
    const upTo = details!.sequence;
    expectExactly(await trail().since(mark, { aggregateType: "member" }, upTo), [
      entry("project.grant.member.removed", "member", grantMembership.events[0]!.aggregateId, { userId: grantMember.userId, roles: ["PROJECT_GRANT_OWNER"], level: "project_grant", scopeId: grantId }),
      entry("project.member.removed", "member", projectMembership.events[0]!.aggregateId, { userId: member.userId, roles: ["PROJECT_OWNER"], level: "project", scopeId: projectId }),
    ]);
    expect(await trail().since(mark, { aggregateType: "project.grant" }, upTo, "grpc-h2c")).toEqual([
      entry("project.grant.removed", "project.grant", grantId, { projectId, grantedOrganizationId: partnerId }),
    ]);
    expect(await trail().since(mark, { aggregateType: "application" }, upTo, "grpc-web-http1")).toEqual([
      entry("application.removed", "application", app.appId, { projectId, name: "Doomed web", clientId: app.clientId }),
    ]);
    expectExactly(await trail().since(mark, { aggregateType: "project", aggregateId: projectId }, upTo, "connect-proto-h2c"), [
      entry("project.role.removed", "project", projectId, { roleKey: "reader" }),
      entry("project.removed", "project", projectId, { name: "Doomed" }),
    ]);
  });
});
