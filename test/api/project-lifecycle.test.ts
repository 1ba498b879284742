import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService, ProjectState } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, type World } from "../support/world.js";
import { lastSequence } from "../support/event-log.js";

/** ListProjects, UpdateProject, Deactivate/ReactivateProject and RemoveProject with its cascade (issue 16). */
const t = useTestServer();
let w: World;
let n = 0;

const projects = (protocol: Protocol = "connect-json-http1", orgId = w.orgA, token = t.server.adminToken) => t.clients.client(ProjectService, protocol, { token, orgId });
const apps = (orgId = w.orgA) => t.clients.client(ApplicationService, "connect-json-http1", { token: t.server.adminToken, orgId });
const events = () => t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });
async function appendedSince(sequence: bigint) {
  return (await events().listEvents({ fromSequence: sequence + 1n, pageSize: 1000 })).events.filter((event) => event.actor !== "system");
}

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "proj-life");
});

/** A fresh organization (so lists and totals are this test's alone). */
async function freshOrg(): Promise<string> {
  return (await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: `proj-life org ${++n}` })).organizationId;
}

async function machineUser(orgId = w.orgB): Promise<string> {
  const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
  return (await users.createMachineUser({ userName: `proj-life-user-${++n}`, name: "Member" })).userId;
}

/** Rows of the SQLite file that still name `id`, by table: must all be gone after a removal. */
function rowsNaming(id: string): Record<string, number> {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string) => (db.prepare(sql).get(id, id) as { n: number }).n;
    return {
      projects: count("SELECT count(*) AS n FROM projects WHERE id = ? OR id = ?"),
      project_roles: count("SELECT count(*) AS n FROM project_roles WHERE project_id = ? OR project_id = ?"),
      project_grants: count("SELECT count(*) AS n FROM project_grants WHERE project_id = ? OR id = ?"),
      memberships: count("SELECT count(*) AS n FROM memberships WHERE scope_id = ? OR project_id = ?"),
      applications: count("SELECT count(*) AS n FROM applications WHERE project_id = ? OR id = ?"),
    };
  } finally {
    db.close();
  }
}
const nothing = { projects: 0, project_roles: 0, project_grants: 0, memberships: 0, applications: 0 };

describe.each(PROTOCOLS)("over %s", (protocol) => {
  it("lists an organization's projects paged in creation order with a total, filtered by name and state", async () => {
    const org = await freshOrg();
    const names = ["Alpha One", "Beta", "alpha two"];
    const ids = [];
    for (const name of names) ids.push((await projects(protocol, org).createProject({ name })).projectId);

    const first = await projects(protocol, org).listProjects({ pageSize: 2 });
    expect(first.projects.map((p) => p.name)).toEqual(["Alpha One", "Beta"]);
    expect(first.details?.totalResult).toBe(3n);
    expect(first.details?.nextPageToken).not.toBe("");
    const second = await projects(protocol, org).listProjects({ pageSize: 2, pageToken: first.details!.nextPageToken });
    expect(second.projects.map((p) => p.projectId)).toEqual([ids[2]]);
    expect(second.details).toMatchObject({ totalResult: 3n, nextPageToken: "" });

    const alpha = await projects(protocol, org).listProjects({ name: "ALPHA" });
    expect(alpha.projects.map((p) => p.name)).toEqual(["Alpha One", "alpha two"]);
    expect(alpha.details?.totalResult).toBe(2n);

    await projects(protocol, org).deactivateProject({ projectId: ids[1]! });
    const inactive = await projects(protocol, org).listProjects({ state: ProjectState.INACTIVE });
    expect(inactive.projects.map((p) => [p.projectId, p.state])).toEqual([[ids[1], ProjectState.INACTIVE]]);
    expect((await projects(protocol, org).listProjects({ state: ProjectState.ACTIVE })).details?.totalResult).toBe(2n);

    expect(await failure(projects(protocol, org).listProjects({ pageToken: "bm90LWEtdG9rZW4" }))).toMatchObject({ code: Code.InvalidArgument, reason: "page_token.invalid" });
  });

  it("shows a PROJECT_OWNER only its own projects (the total too); a caller without project roles is denied", async () => {
    const asOwnerOfP2 = await projects(protocol, w.orgA, w.actors.projectOwnerP2.token).listProjects({});
    expect(asOwnerOfP2.projects.map((p) => p.projectId)).toEqual([w.p2]);
    expect(asOwnerOfP2.details?.totalResult).toBe(1n);
    const asOrgOwner = await projects(protocol, w.orgA, w.actors.orgOwnerA.token).listProjects({});
    expect(asOrgOwner.projects.map((p) => p.projectId)).toEqual(expect.arrayContaining([w.p1, w.p2]));
    expect(await failure(projects(protocol, w.orgA, w.actors.nobody.token).listProjects({}))).toMatchObject({ code: Code.PermissionDenied });
    // A grant owner holds no project.read: it reads its grant, not the project list.
    expect(await failure(projects(protocol, w.orgA, w.actors.grantOwnerG1.token).listProjects({}))).toMatchObject({ code: Code.PermissionDenied });
  });

  it("renames a project with an event; the same name again changes nothing; names stay unique case-insensitively", async () => {
    const { projectId } = await projects(protocol).createProject({ name: `Rename me ${++n}` });
    const taken = `Taken ${++n}`;
    await projects(protocol).createProject({ name: taken });
    const since = await lastSequence(events());
    const renamed = await projects(protocol).updateProject({ projectId, name: `Renamed ${n}` });
    expect((await projects(protocol).getProject({ projectId })).project?.name).toBe(`Renamed ${n}`);
    const again = await projects(protocol).updateProject({ projectId, name: `Renamed ${n}` });
    expect(again.details?.sequence).toBe(renamed.details?.sequence);
    expect((await appendedSince(since)).map((e) => [e.eventType, e.aggregateId, e.sequence])).toEqual([["project.changed", projectId, renamed.details!.sequence]]);

    expect(await failure(projects(protocol).updateProject({ projectId, name: taken.toUpperCase() }))).toMatchObject({ code: Code.AlreadyExists, reason: "project.already_exists" });
    expect(await failure(projects(protocol).updateProject({ projectId: "no-such-project", name: "X" }))).toMatchObject({ code: Code.NotFound, reason: "project.not_found" });
    expect(await failure(projects(protocol, w.orgA, w.actors.nobody.token).updateProject({ projectId, name: "X" }))).toMatchObject({ code: Code.PermissionDenied });
    // The owner of another project of the organization is no owner of this one.
    expect(await failure(projects(protocol, w.orgA, w.actors.projectOwnerP2.token).updateProject({ projectId: w.p1, name: "X" }))).toMatchObject({ code: Code.PermissionDenied });
  });

  it("deactivates a project into read-only and reactivates it; each change an event, repeats refused without one", async () => {
    const { projectId } = await projects(protocol).createProject({ name: `Dormant ${++n}` });
    await projects(protocol).addProjectRole({ projectId, roleKey: "viewer", displayName: "Viewer" });
    const { grantId } = await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["viewer"] });
    expect(await failure(projects(protocol).reactivateProject({ projectId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "project.not_inactive" });
    const since = await lastSequence(events());
    const deactivated = await projects(protocol).deactivateProject({ projectId });
    expect(await failure(projects(protocol).deactivateProject({ projectId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "project.already_inactive" });

    // Reads still answer.
    expect((await projects(protocol).getProject({ projectId })).project).toMatchObject({ state: ProjectState.INACTIVE, details: { sequence: deactivated.details!.sequence } });
    expect((await projects(protocol).listProjectRoles({ projectId })).roles.map((r) => r.roleKey)).toEqual(["viewer"]);
    expect((await projects(protocol).listProjectGrants({ projectId })).grants.map((g) => g.grantId)).toEqual([grantId]);
    // Writes to it and under it are refused.
    const inactive = { code: Code.FailedPrecondition, reason: "project.inactive" };
    const userId = await machineUser();
    expect(await failure(projects(protocol).updateProject({ projectId, name: "Awake" }))).toMatchObject(inactive);
    expect(await failure(projects(protocol).addProjectRole({ projectId, roleKey: "editor", displayName: "Editor" }))).toMatchObject(inactive);
    expect(await failure(projects(protocol).addProjectMember({ projectId, userId, roles: ["PROJECT_OWNER_VIEWER"] }))).toMatchObject(inactive);
    expect(await failure(projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgC, roleKeys: [] }))).toMatchObject(inactive);
    expect(await failure(projects(protocol).addProjectGrantMember({ projectId, grantId, userId, roles: [] }))).toMatchObject(inactive);
    expect(await failure(projects(protocol).updateProjectGrant({ projectId, grantId, roleKeys: [] }))).toMatchObject(inactive);
    expect(await failure(apps().createApiApplication({ projectId, name: "API" }))).toMatchObject(inactive);

    const reactivated = await projects(protocol).reactivateProject({ projectId });
    expect((await appendedSince(since)).filter((e) => e.eventType !== "user.machine.added").map((e) => [e.eventType, e.sequence])).toEqual([
      ["project.deactivated", deactivated.details!.sequence],
      ["project.reactivated", reactivated.details!.sequence],
    ]);
    await projects(protocol).addProjectMember({ projectId, userId, roles: ["PROJECT_OWNER_VIEWER"] });
    await apps().createApiApplication({ projectId, name: "API" });
    expect((await projects(protocol).getProject({ projectId })).project?.state).toBe(ProjectState.ACTIVE);
  });

  it("removes a project with its roles, grants and their members, members and apps: each an event, nothing left naming it", async () => {
    const name = `Doomed ${++n}`;
    const { projectId } = await projects(protocol).createProject({ name });
    await projects(protocol).addProjectRole({ projectId, roleKey: "reader", displayName: "Reader" });
    await projects(protocol).addProjectRole({ projectId, roleKey: "writer", displayName: "Writer" });
    const { grantId } = await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["reader"] });
    const grantMember = await machineUser();
    const projectMember = await machineUser();
    await projects(protocol).addProjectGrantMember({ projectId, grantId, userId: grantMember, roles: ["PROJECT_GRANT_OWNER"] });
    await projects(protocol).addProjectMember({ projectId, userId: projectMember, roles: ["PROJECT_OWNER"] });
    const { appId } = await apps().createOidcApplication({ projectId, name: "Web", redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
    // Removal works on an inactive project too.
    await projects(protocol).deactivateProject({ projectId });
    const since = await lastSequence(events());

    const { details } = await projects(protocol).removeProject({ projectId });
    const appended = await appendedSince(since);
    expect(appended.map((e) => e.eventType)).toEqual([
      "project.grant.member.removed",
      "project.grant.removed",
      "project.member.removed",
      "application.removed",
      "project.role.removed",
      "project.role.removed",
      "project.removed",
    ]);
    expect(appended.at(-1)).toMatchObject({ aggregateId: projectId, sequence: details?.sequence });
    expect(new Set(appended.map((e) => e.sequence)).size).toBe(appended.length);
    expect(rowsNaming(projectId)).toEqual(nothing);
    expect(rowsNaming(grantId)).toEqual(nothing);
    expect(rowsNaming(appId)).toEqual(nothing);

    expect(await failure(projects(protocol).getProject({ projectId }))).toMatchObject({ code: Code.NotFound, reason: "project.not_found" });
    expect(await failure(projects(protocol).getProjectGrant({ projectId, grantId }))).toMatchObject({ code: Code.NotFound, reason: "project.not_found" });
    expect(await failure(apps().getApplication({ projectId, appId }))).toMatchObject({ code: Code.NotFound, reason: "project.not_found" });
    expect((await projects(protocol).listProjects({})).projects.map((p) => p.projectId)).not.toContain(projectId);
    expect(await failure(projects(protocol).removeProject({ projectId }))).toMatchObject({ code: Code.NotFound, reason: "project.not_found" });
    // Its name is free again.
    await projects(protocol).createProject({ name: name.toLowerCase() });
  });

  it("lets the project's PROJECT_OWNER remove it, but not a viewer, the owner of another project or a grant owner", async () => {
    const asPOwner = projects(protocol, w.orgA, w.actors.projectOwnerP2.token);
    expect(await failure(projects(protocol, w.orgA, w.actors.grantOwnerG1.token).removeProject({ projectId: w.p1 }))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(asPOwner.removeProject({ projectId: w.p1 }))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(asPOwner.deactivateProject({ projectId: w.p1 }))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(projects(protocol, w.orgA, w.actors.nobody.token).removeProject({ projectId: "no-such-project" }))).toMatchObject({ code: Code.PermissionDenied });

    const { projectId } = await projects(protocol).createProject({ name: `Owned ${++n}` });
    const owner = await machineUser(w.orgA);
    const viewer = await machineUser(w.orgA);
    await projects(protocol).addProjectMember({ projectId, userId: owner, roles: ["PROJECT_OWNER"] });
    await projects(protocol).addProjectMember({ projectId, userId: viewer, roles: ["PROJECT_OWNER_VIEWER"] });
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: w.orgA });
    const ownerToken = (await users.addPersonalAccessToken({ userId: owner })).token;
    const viewerToken = (await users.addPersonalAccessToken({ userId: viewer })).token;
    expect(await failure(projects(protocol, w.orgA, viewerToken).removeProject({ projectId }))).toMatchObject({ code: Code.PermissionDenied });
    await projects(protocol, w.orgA, ownerToken).deactivateProject({ projectId });
    await projects(protocol, w.orgA, ownerToken).removeProject({ projectId });
    expect(rowsNaming(projectId)).toEqual(nothing);
  });
});
