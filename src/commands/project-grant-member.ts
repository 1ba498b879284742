import { selectProjectGrant } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { EventType } from "../events/types.js";
import { addMember } from "./add-member.js";
import type { Expected } from "./commit-as.js";
import { removeMember } from "./remove-member.js";

interface GrantMemberInput {
  projectId: string;
  grantId: string;
  userId: string;
}

/**
 * SPEC 4.4: adds a user to the member list of a project grant with project-grant roles (none: a
 * member without rights). Effective at once: memberships are read on every call.
 */
export async function addProjectGrantMember(deps: Deps, caller: Caller, input: GrantMemberInput & { roles: string[] }) {
  const { organization, project, grant } = await selectProjectGrant(deps, caller, input, "project.grant.member.write");
  const target = {
    level: "project_grant" as const,
    scopeId: grant.id,
    ownerOrgId: organization.id,
    projectId: project.id,
    grantedOrgId: grant.grantedOrgId,
    eventType: EventType.projectGrantMemberAdded,
  };
  return { details: await addMember(deps, caller, target, input.userId, input.roles) };
}

export async function removeProjectGrantMember(deps: Deps, caller: Caller, input: GrantMemberInput & Expected) {
  const { organization, project, grant } = await selectProjectGrant(deps, caller, input, "project.grant.member.write");
  const target = { level: "project_grant" as const, scopeId: grant.id, ownerOrgId: organization.id, projectId: project.id, eventType: EventType.projectGrantMemberRemoved };
  return { details: await removeMember(deps, caller, target, input.userId, input) };
}
