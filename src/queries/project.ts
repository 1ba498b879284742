import { selectProject, selectProjectGrant } from "../access/select-project.js";
import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, can } from "../domain/authorization.js";
import { uniquenessKey } from "../domain/names.js";
import type { ProjectRow } from "../store/rows.js";
import type { ProjectFilter } from "../store/store.js";
import { readDetails, withDetails } from "./details.js";
import { listMembersOfScope } from "./members.js";
import { type PageRequest, readPage } from "./paging.js";

export async function getProject(deps: Deps, caller: Caller, projectId: string) {
  const { project } = await selectProject(deps, caller, projectId, "project.read");
  return readProject(deps, project);
}

async function readProject(deps: Deps, project: ProjectRow) {
  const [roles, details] = await Promise.all([deps.store.listProjectRoles(project.id), readDetails(deps.store, "project", project.id)]);
  return { project, roles, details };
}

/**
 * The selected organization's projects the caller may read, in creation order. `project.read` for the
 * whole organization shows all; otherwise only the projects the caller's project memberships cover
 * (so the total never counts a project the caller cannot open).
 */
export async function listProjects(deps: Deps, caller: Caller, input: PageRequest & { name: string; state?: ProjectRow["state"] }) {
  const organization = await selectOrganization(deps, caller);
  const filter: ProjectFilter = { orgId: organization.id };
  if (!can(caller.principal, "project.read", { orgId: organization.id })) {
    // The projects the caller reads through a project role here: can() holds only for a project membership of this
    // organization (no other membership grants project.read here, or the test above would have held).
    const ids = caller.principal.memberships.map((m) => m.scopeId).filter((projectId) => can(caller.principal, "project.read", { orgId: organization.id, projectId }));
    // No project to read there: the same answer as for any other call without the permission.
    // Stryker disable next-line ObjectLiteral: the caller has no role granting project.read in this organization or instance-wide, so no scope would pass
    if (ids.length === 0) authorize(caller.principal, "project.read", { orgId: organization.id });
    filter.ids = ids;
  }
  const name = input.name.trim();
  // Stryker disable next-line ConditionalExpression: the empty name is contained in every name (instr), so always filtering by it lists the same
  if (name) filter.nameContains = uniquenessKey(name);
  // Stryker disable next-line ConditionalExpression: an unset state is undefined, and an undefined filter.state filters nothing
  if (input.state) filter.state = input.state;
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listProjectsPage({ ...filter, ...window }),
    () => deps.store.countProjects(filter),
  );
  return { projects: await Promise.all(rows.map((project) => readProject(deps, project))), total, nextPageToken };
}

export async function listProjectRoles(deps: Deps, caller: Caller, input: PageRequest & { projectId: string }) {
  const { project } = await selectProject(deps, caller, input.projectId, "project.read");
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listProjectRolesPage({ projectId: project.id, ...window }),
    () => deps.store.countProjectRoles(project.id),
  );
  return { roles: rows, total, nextPageToken };
}

/** Who holds rights in a project is part of reading it: `project.read`, like ListOrganizationMembers. */
export async function listProjectMembers(deps: Deps, caller: Caller, input: PageRequest & { projectId: string }) {
  const { project } = await selectProject(deps, caller, input.projectId, "project.read");
  return listMembersOfScope(deps, "project", project.id, input);
}

export async function getProjectGrant(deps: Deps, caller: Caller, ids: { projectId: string; grantId: string }) {
  const { grant } = await selectProjectGrant(deps, caller, ids, "project.grant.read");
  return { grant, details: await readDetails(deps.store, "project.grant", grant.id) };
}

/** Every grant of the project: `project.grant.read` for the whole project, not one grant's. */
export async function listProjectGrants(deps: Deps, caller: Caller, input: PageRequest & { projectId: string }) {
  const { project } = await selectProject(deps, caller, input.projectId, "project.grant.read");
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listProjectGrantsPage({ projectId: project.id, ...window }),
    () => deps.store.countProjectGrants(project.id),
  );
  return { grants: await withDetails(deps.store, "project.grant", rows), total, nextPageToken };
}

export async function listProjectGrantMembers(deps: Deps, caller: Caller, input: PageRequest & { projectId: string; grantId: string }) {
  const { grant } = await selectProjectGrant(deps, caller, input, "project.grant.member.read");
  return listMembersOfScope(deps, "project_grant", grant.id, input);
}
