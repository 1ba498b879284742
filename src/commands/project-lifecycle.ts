import { selectProject } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, failedPrecondition, notFound } from "../domain/errors.js";
import { uniquenessKey } from "../domain/names.js";
import type { NewEvent } from "../events/event.js";
import { detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import type { ProjectRow } from "../store/rows.js";
import type { RowWrite } from "../store/commit.js";
import { commitAs, detailsOfNoChange, type Expected, expectationOf } from "./commit-as.js";
import { grantRemoval } from "./project-grant-lifecycle.js";
import { membershipRemoval } from "./remove-member.js";
import { spanOf } from "../queries/details.js";

export type ProjectStateChange = "deactivate" | "reactivate";

const wanted: Record<ProjectStateChange, ProjectRow["state"]> = { deactivate: "inactive", reactivate: "active" };
const stateEvents: Record<ProjectStateChange, string> = { deactivate: EventType.projectDeactivated, reactivate: EventType.projectReactivated };

/**
 * Commits one change of a project. The writes are conditional, so a change that lost a race answers
 * as the call after the winner would: not_found when the project is gone, else what `recheck` says.
 */
async function commitProjectChange(
  deps: Deps,
  caller: Caller,
  project: ProjectRow,
  change: { writes: RowWrite[]; events: NewEvent[]; request: Expected; recheck?: (now: ProjectRow) => void },
) {
  const span = await spanOf(deps.store, "project", project.id);
  try {
    const commit = { writes: change.writes, events: change.events, expect: expectationOf("project", project.id, change.request) };
    return { details: detailsOfChange(await commitAs(deps, caller, commit), span.first) };
  } catch (error) {
    if (!(error instanceof DomainError && error.reason === "store.condition_failed")) throw error;
    const now = await deps.store.findProjectById(project.id);
    if (!now) throw projectNotFound(project.id);
    change.recheck?.(now);
    throw error;
  }
}

/** Renames a project. The same name again is no change: no event, the details of the last one. */
export async function updateProject(deps: Deps, caller: Caller, input: { projectId: string; name: string } & Expected) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.write");
  if (project.name === input.name) {
    return { details: await detailsOfNoChange(deps, { type: "project", id: project.id }, expectationOf("project", project.id, input)) };
  }
  return commitProjectChange(deps, caller, project, {
    request: input,
    writes: [{ kind: "project.rename", id: project.id, name: input.name, nameKey: uniquenessKey(input.name) }],
    events: [{ aggregateType: "project", aggregateId: project.id, type: EventType.projectChanged, payload: { name: input.name }, resourceOwner: organization.id }],
  });
}

/** Deactivates (read-only, see select-project.ts) or reactivates a project. Nothing is deleted. */
export async function changeProjectState(deps: Deps, caller: Caller, projectId: string, change: ProjectStateChange, request: Expected = {}) {
  const { organization, project } = await selectProject(deps, caller, projectId, "project.write", { allowInactive: true });
  requireChange(project, change);
  return commitProjectChange(deps, caller, project, {
    request,
    writes: [{ kind: "project.setState", id: project.id, state: wanted[change] }],
    events: [{ aggregateType: "project", aggregateId: project.id, type: stateEvents[change], payload: {}, resourceOwner: organization.id }],
    recheck: (now) => requireChange(now, change),
  });
}

/**
 * Removes a project and everything under it in one transaction, each removal its own event: grants
 * (with their members), members, applications, roles, then the project. The store refuses the final
 * delete if anything was added to the project since it was read, so nothing is ever left naming it.
 * Holding `project.write` covers every project and grant role, so the privilege ceiling of a member
 * removal holds for every membership taken here.
 */
export async function removeProject(deps: Deps, caller: Caller, projectId: string, request: Expected = {}) {
  const { organization, project } = await selectProject(deps, caller, projectId, "project.write", { allowInactive: true });
  const owner = organization.id;
  const [grants, members, applications, roles] = await Promise.all([
    deps.store.listProjectGrantsOfProject(project.id),
    deps.store.listMembershipsOfScope("project", project.id),
    deps.store.listApplicationsOfProject(project.id),
    deps.store.listProjectRoles(project.id),
  ]);
  const writes: RowWrite[] = [];
  const events: NewEvent[] = [];
  for (const grant of grants) {
    const removal = grantRemoval(grant, owner, await deps.store.listMembershipsOfScope("project_grant", grant.id));
    writes.push(...removal.writes);
    events.push(...removal.events);
  }
  const memberTarget = { level: "project" as const, scopeId: project.id, ownerOrgId: owner, projectId: project.id, eventType: EventType.projectMemberRemoved };
  for (const membership of members) {
    const { write, event } = membershipRemoval(membership, memberTarget);
    writes.push(write);
    events.push(event);
  }
  for (const app of applications) {
    writes.push({ kind: "application.delete", id: app.id });
    events.push({
      aggregateType: "application",
      aggregateId: app.id,
      type: EventType.applicationRemoved,
      // As RemoveApplication: what identifies it, never the secret hash.
      payload: { projectId: project.id, name: app.name, clientId: app.clientId },
      resourceOwner: owner,
    });
  }
  for (const role of roles) {
    writes.push({ kind: "projectRole.delete", projectId: project.id, roleKey: role.roleKey });
    events.push({ aggregateType: "project", aggregateId: project.id, type: EventType.projectRoleRemoved, payload: { roleKey: role.roleKey }, resourceOwner: owner });
  }
  writes.push({ kind: "project.delete", id: project.id });
  events.push({ aggregateType: "project", aggregateId: project.id, type: EventType.projectRemoved, payload: { name: project.name }, resourceOwner: owner });
  return commitProjectChange(deps, caller, project, { writes, events, request });
}

function requireChange(project: ProjectRow, change: ProjectStateChange): void {
  if (change === "deactivate" && project.state === "inactive") throw failedPrecondition("project.already_inactive", "the project is inactive already");
  if (change === "reactivate" && project.state === "active") throw failedPrecondition("project.not_inactive", "the project is not inactive");
}

export const projectNotFound = (projectId: string) => notFound("project.not_found", "the project does not exist", { projectId });
