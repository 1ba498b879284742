import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, type World } from "../support/world.js";
import { lastSequence } from "../support/event-log.js";

/**
 * ListProjectRoles, RemoveProjectRole, ListProjectMembers, RemoveProjectMember, ListProjectGrants,
 * UpdateProjectGrant, RemoveProjectGrant and the paged ListProjectGrantMembers (issue 16).
 */
const t = useTestServer();
let w: World;
let n = 0;

const projects = (protocol: Protocol = "connect-json-http1", token = t.server.adminToken) => t.clients.client(ProjectService, protocol, { token, orgId: w.orgA });
const events = () => t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken });
async function appendedSince(sequence: bigint) {
  return (await events().listEvents({ fromSequence: sequence + 1n, pageSize: 1000 })).events.filter((event) => event.actor !== "system");
}

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "grant-life");
});

async function machineUser(orgId = w.orgB): Promise<string> {
  const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
  return (await users.createMachineUser({ userName: `grant-life-user-${++n}`, name: "Member" })).userId;
}

/** A fresh project with roles `reader`, `writer` and `PROJECT_OWNER` (a role key, not the management role). */
async function freshProject(protocol: Protocol) {
  const { projectId } = await projects(protocol).createProject({ name: `Grant life ${++n}` });
  for (const roleKey of ["reader", "writer", "PROJECT_OWNER"]) await projects(protocol).addProjectRole({ projectId, roleKey, displayName: roleKey });
  return projectId;
}

function raw<T>(sql: string, ...params: string[]): T[] {
  const db = new Database(`${t.server.dataDir}/gatehouse.db`, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

describe.each(PROTOCOLS)("over %s", (protocol) => {
  it("lists roles, members and grants paged in the order they were added, with totals", async () => {
    const projectId = await freshProject(protocol);
    const roles = await projects(protocol).listProjectRoles({ projectId, pageSize: 2 });
    expect(roles.roles.map((r) => r.roleKey)).toEqual(["reader", "writer"]);
    expect(roles.details?.totalResult).toBe(3n);
    const rest = await projects(protocol).listProjectRoles({ projectId, pageSize: 2, pageToken: roles.details!.nextPageToken });
    expect(rest.roles.map((r) => r.roleKey)).toEqual(["PROJECT_OWNER"]);
    expect(rest.details?.nextPageToken).toBe("");

    const members = [await machineUser(), await machineUser(), await machineUser()];
    for (const userId of members) await projects(protocol).addProjectMember({ projectId, userId, roles: ["PROJECT_OWNER_VIEWER"] });
    const firstMembers = await projects(protocol).listProjectMembers({ projectId, pageSize: 2 });
    const lastMembers = await projects(protocol).listProjectMembers({ projectId, pageSize: 2, pageToken: firstMembers.details!.nextPageToken });
    expect([...firstMembers.members, ...lastMembers.members].map((m) => m.userId)).toEqual(members);
    expect(firstMembers.details?.totalResult).toBe(3n);
    expect(lastMembers.members[0]?.roles).toEqual(["PROJECT_OWNER_VIEWER"]);

    const g1 = (await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["reader"] })).grantId;
    const g2 = (await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgC, roleKeys: [] })).grantId;
    const firstGrants = await projects(protocol).listProjectGrants({ projectId, pageSize: 1 });
    expect(firstGrants.grants.map((g) => [g.grantId, g.grantedOrganizationId, g.roleKeys])).toEqual([[g1, w.orgB, ["reader"]]]);
    expect(firstGrants.details?.totalResult).toBe(2n);
    const lastGrants = await projects(protocol).listProjectGrants({ projectId, pageSize: 1, pageToken: firstGrants.details!.nextPageToken });
    expect(lastGrants.grants.map((g) => g.grantId)).toEqual([g2]);

    for (const userId of members) await projects(protocol).addProjectGrantMember({ projectId, grantId: g1, userId, roles: [] });
    const firstGrantMembers = await projects(protocol).listProjectGrantMembers({ projectId, grantId: g1, pageSize: 2 });
    expect(firstGrantMembers.details?.totalResult).toBe(3n);
    const lastGrantMembers = await projects(protocol).listProjectGrantMembers({ projectId, grantId: g1, pageSize: 2, pageToken: firstGrantMembers.details!.nextPageToken });
    expect([...firstGrantMembers.members, ...lastGrantMembers.members].map((m) => m.userId)).toEqual(members);
    expect(await failure(projects(protocol).listProjectGrants({ projectId, pageToken: "bm9wZQ" }))).toMatchObject({ code: Code.InvalidArgument, reason: "page_token.invalid" });
  });

  it("removes a role from the project and from every grant holding it, each change an event; never from a membership", async () => {
    const projectId = await freshProject(protocol);
    const g1 = (await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["reader", "writer", "PROJECT_OWNER"] })).grantId;
    const g2 = (await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgC, roleKeys: ["writer"] })).grantId;
    const owner = await machineUser();
    await projects(protocol).addProjectMember({ projectId, userId: owner, roles: ["PROJECT_OWNER"] });
    const since = await lastSequence(events());

    const { details } = await projects(protocol).removeProjectRole({ projectId, roleKey: "reader" });
    expect((await appendedSince(since)).map((e) => [e.eventType, e.aggregateId])).toEqual([
      ["project.grant.changed", g1],
      ["project.role.removed", projectId],
    ]);
    expect((await appendedSince(since)).at(-1)?.sequence).toBe(details?.sequence);
    expect((await projects(protocol).getProjectGrant({ projectId, grantId: g1 })).grant?.roleKeys).toEqual(["writer", "PROJECT_OWNER"]);
    expect((await projects(protocol).getProjectGrant({ projectId, grantId: g2 })).grant?.roleKeys).toEqual(["writer"]);
    expect((await projects(protocol).listProjectRoles({ projectId })).roles.map((r) => r.roleKey)).toEqual(["writer", "PROJECT_OWNER"]);
    expect(raw<{ role_keys: string }>("SELECT role_keys FROM project_grants WHERE project_id = ? ORDER BY rowid", projectId).map((r) => JSON.parse(r.role_keys))).toEqual([
      ["writer", "PROJECT_OWNER"],
      ["writer"],
    ]);
    expect(await failure(projects(protocol).removeProjectRole({ projectId, roleKey: "reader" }))).toMatchObject({ code: Code.NotFound, reason: "project.role.not_found" });

    // The role key PROJECT_OWNER goes from grants; the membership holding the management role PROJECT_OWNER stays.
    await projects(protocol).removeProjectRole({ projectId, roleKey: "PROJECT_OWNER" });
    expect((await projects(protocol).getProjectGrant({ projectId, grantId: g1 })).grant?.roleKeys).toEqual(["writer"]);
    expect((await projects(protocol).listProjectMembers({ projectId })).members.map((m) => [m.userId, m.roles])).toEqual([[owner, ["PROJECT_OWNER"]]]);
    expect(await failure(projects(protocol, w.actors.projectOwnerP2.token).removeProjectRole({ projectId, roleKey: "writer" }))).toMatchObject({ code: Code.PermissionDenied });
  });

  it("removes a project member with its event; again is not_found; the ceiling and permission hold", async () => {
    const projectId = await freshProject(protocol);
    const userId = await machineUser();
    await projects(protocol).addProjectMember({ projectId, userId, roles: ["PROJECT_OWNER_VIEWER"] });
    const since = await lastSequence(events());
    const { details } = await projects(protocol).removeProjectMember({ projectId, userId });
    expect((await appendedSince(since)).map((e) => [e.eventType, e.sequence])).toEqual([["project.member.removed", details!.sequence]]);
    expect((await projects(protocol).listProjectMembers({ projectId })).details?.totalResult).toBe(0n);
    expect(raw("SELECT id FROM memberships WHERE scope_id = ?", projectId)).toEqual([]);
    expect(await failure(projects(protocol).removeProjectMember({ projectId, userId }))).toMatchObject({ code: Code.NotFound, reason: "member.not_found" });
    // P1's owner may remove P1's members, not those of another project.
    expect(await failure(projects(protocol, w.actors.projectOwnerP2.token).removeProjectMember({ projectId: w.p1, userId: w.actors.projectOwnerP1.userId }))).toMatchObject({
      code: Code.PermissionDenied,
    });
  });

  it("updates a grant's role keys: unknown keys named one by one, the same set appends nothing", async () => {
    const projectId = await freshProject(protocol);
    const { grantId } = await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["reader"] });
    const bad = await failure(projects(protocol).updateProjectGrant({ projectId, grantId, roleKeys: ["writer", "ghost", "reader", "PROJECT_GRANT_OWNER"] }));
    expect(bad).toMatchObject({ code: Code.InvalidArgument, reason: "project.role.not_found", fields: ["role_keys[1]", "role_keys[3]"] });

    const since = await lastSequence(events());
    const updated = await projects(protocol).updateProjectGrant({ projectId, grantId, roleKeys: ["writer", "PROJECT_OWNER"] });
    const again = await projects(protocol).updateProjectGrant({ projectId, grantId, roleKeys: ["PROJECT_OWNER", "writer"] });
    expect(again.details?.sequence).toBe(updated.details?.sequence);
    expect((await appendedSince(since)).map((e) => [e.eventType, e.aggregateId, e.sequence])).toEqual([["project.grant.changed", grantId, updated.details!.sequence]]);
    expect((await projects(protocol).getProjectGrant({ projectId, grantId })).grant?.roleKeys).toEqual(["writer", "PROJECT_OWNER"]);
    expect(await failure(projects(protocol).updateProjectGrant({ projectId, grantId: "no-such-grant", roleKeys: [] }))).toMatchObject({ code: Code.NotFound, reason: "project.grant.not_found" });
    // The grant's own owner administers its members, not what the grant hands out.
    expect(await failure(projects(protocol, w.actors.grantOwnerG1.token).updateProjectGrant({ projectId: w.p1, grantId: w.g1, roleKeys: [] }))).toMatchObject({ code: Code.PermissionDenied });
  });

  it("removes a grant with its members, each an event; nothing refers to it afterwards; it can be granted again", async () => {
    const projectId = await freshProject(protocol);
    const { grantId } = await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["reader"] });
    const members = [await machineUser(), await machineUser()];
    for (const userId of members) await projects(protocol).addProjectGrantMember({ projectId, grantId, userId, roles: ["PROJECT_GRANT_OWNER"] });
    const since = await lastSequence(events());

    const { details } = await projects(protocol).removeProjectGrant({ projectId, grantId });
    const appended = await appendedSince(since);
    expect(appended.map((e) => e.eventType)).toEqual(["project.grant.member.removed", "project.grant.member.removed", "project.grant.removed"]);
    expect(appended.at(-1)).toMatchObject({ aggregateId: grantId, sequence: details?.sequence });
    expect(raw("SELECT id FROM project_grants WHERE id = ?", grantId)).toEqual([]);
    expect(raw("SELECT id FROM memberships WHERE scope_id = ?", grantId)).toEqual([]);
    expect((await projects(protocol).listProjectGrants({ projectId })).details?.totalResult).toBe(0n);
    expect(await failure(projects(protocol).getProjectGrant({ projectId, grantId }))).toMatchObject({ code: Code.NotFound, reason: "project.grant.not_found" });
    expect(await failure(projects(protocol).listProjectGrantMembers({ projectId, grantId }))).toMatchObject({ code: Code.NotFound, reason: "project.grant.not_found" });
    expect(await failure(projects(protocol).removeProjectGrant({ projectId, grantId }))).toMatchObject({ code: Code.NotFound, reason: "project.grant.not_found" });
    await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: [] });
  });

  it("reads of grants need the whole project; a grant owner is denied the list and the removal, a viewer every write", async () => {
    expect(await failure(projects(protocol, w.actors.grantOwnerG1.token).listProjectGrants({ projectId: w.p1 }))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(projects(protocol, w.actors.grantOwnerG1.token).removeProjectGrant({ projectId: w.p1, grantId: w.g1 }))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(projects(protocol, w.actors.nobody.token).listProjectRoles({ projectId: w.p1 }))).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(projects(protocol, w.actors.nobody.token).listProjectMembers({ projectId: w.p1 }))).toMatchObject({ code: Code.PermissionDenied });
    expect((await projects(protocol, w.actors.projectOwnerP1.token).listProjectGrants({ projectId: w.p1 })).grants.map((g) => g.grantId)).toEqual([w.g1, w.g2]);
    expect((await projects(protocol, w.actors.grantOwnerG1.token).listProjectGrantMembers({ projectId: w.p1, grantId: w.g1 })).details?.totalResult).toBe(1n);
  });
});
