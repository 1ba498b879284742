import type { MessageInitShape } from "@bufbuild/protobuf";
import { ProjectState, type ProjectGrantSchema, type ProjectSchema } from "../../../gen/gatehouse/admin/v1/project_pb.js";
import type { Details } from "../../events/details.js";
import type { ProjectGrantRow, ProjectRoleRow, ProjectRow } from "../../store/rows.js";
import { toDetailsMessage } from "../convert.js";

const states: Record<ProjectRow["state"], ProjectState> = { active: ProjectState.ACTIVE, inactive: ProjectState.INACTIVE };

export function toProjectMessage(read: { project: ProjectRow; roles: ProjectRoleRow[]; details: Details }): MessageInitShape<typeof ProjectSchema> {
  return {
    projectId: read.project.id,
    name: read.project.name,
    roles: read.roles.map(toRoleMessage),
    details: toDetailsMessage(read.details),
    state: states[read.project.state],
  };
}

export function toRoleMessage(role: ProjectRoleRow) {
  return { roleKey: role.roleKey, displayName: role.displayName };
}

export function toGrantMessage(grant: ProjectGrantRow, details: Details): MessageInitShape<typeof ProjectGrantSchema> {
  return {
    grantId: grant.id,
    projectId: grant.projectId,
    grantedOrganizationId: grant.grantedOrgId,
    roleKeys: grant.roleKeys,
    details: toDetailsMessage(details),
  };
}

/** The state filter of ListProjects: UNSPECIFIED means any state. */
export function fromProjectState(state: ProjectState): ProjectRow["state"] | undefined {
  if (state === ProjectState.ACTIVE) return "active";
  if (state === ProjectState.INACTIVE) return "inactive";
  return undefined;
}
