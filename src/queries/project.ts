import { selectProject, selectProjectGrant } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { readDetails, withDetails } from "./details.js";

export async function getProject(deps: Deps, caller: Caller, projectId: string) {
  const { project } = await selectProject(deps, caller, projectId, "project.read");
  const [roles, details] = await Promise.all([deps.store.listProjectRoles(project.id), readDetails(deps.store, "project", project.id)]);
  return { project, roles, details };
}

export async function getProjectGrant(deps: Deps, caller: Caller, ids: { projectId: string; grantId: string }) {
  const { grant } = await selectProjectGrant(deps, caller, ids, "project.grant.read");
  return { grant, details: await readDetails(deps.store, "project.grant", grant.id) };
}

export async function listProjectGrantMembers(deps: Deps, caller: Caller, ids: { projectId: string; grantId: string }) {
  const { grant } = await selectProjectGrant(deps, caller, ids, "project.grant.member.read");
  return { members: await withDetails(deps.store, "member", await deps.store.listMembershipsOfScope("project_grant", grant.id)) };
}
