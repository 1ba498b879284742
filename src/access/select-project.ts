import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { failedPrecondition, notFound } from "../domain/errors.js";
import type { Permission } from "../domain/roles.js";
import type { OrganizationRow, ProjectGrantRow, ProjectRow } from "../store/rows.js";
import { selectOrganization } from "./select-organization.js";

export interface SelectedProject {
  organization: OrganizationRow;
  project: ProjectRow;
}

/**
 * Resolves a project of the selected organization for an operation needing `permission` on it.
 * Permission is checked on the ids the caller sent BEFORE anything is looked up, so a caller
 * without rights learns nothing (permission_denied), while an authorized caller gets not_found for
 * a project that is not in the organization.
 */
export async function selectProject(
  deps: Deps,
  caller: Caller,
  projectId: string,
  permission: Permission,
  options: { allowInactive?: boolean } = {},
): Promise<SelectedProject> {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, permission, { orgId: organization.id, projectId });
  const project = await projectIn(deps, organization, projectId);
  if (!options.allowInactive) requireWritable(project, permission);
  return { organization, project };
}

/** Like selectProject, for an operation on one grant of the project (grant roles count here). */
export async function selectProjectGrant(
  deps: Deps,
  caller: Caller,
  ids: { projectId: string; grantId: string },
  permission: Permission,
): Promise<SelectedProject & { grant: ProjectGrantRow }> {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, permission, { orgId: organization.id, projectId: ids.projectId, grantId: ids.grantId });
  const project = await projectIn(deps, organization, ids.projectId);
  requireWritable(project, permission);
  const grant = await deps.store.findProjectGrantById(ids.grantId);
  if (!grant || grant.projectId !== project.id) {
    throw notFound("project.grant.not_found", "the project grant does not exist", { projectId: ids.projectId, grantId: ids.grantId });
  }
  return { organization, project, grant };
}

async function projectIn(deps: Deps, organization: OrganizationRow, projectId: string): Promise<ProjectRow> {
  const project = await deps.store.findProjectById(projectId);
  if (!project || project.orgId !== organization.id) throw notFound("project.not_found", "the project does not exist", { projectId });
  return project;
}

/**
 * An inactive project is read-only: every write to it or anything under it is refused until it is
 * reactivated (its own state change and removal opt out with `allowInactive`).
 */
function requireWritable(project: ProjectRow, permission: Permission): void {
  if (project.state === "inactive" && !permission.endsWith(".read")) {
    throw failedPrecondition("project.inactive", "the project is inactive; reactivate it first", { projectId: project.id });
  }
}
