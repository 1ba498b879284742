import { selectProjectGrant } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { notFound } from "../domain/errors.js";
import { detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import { addMember } from "./add-member.js";
import { commitAs } from "./commit-as.js";

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
  const target = { level: "project_grant" as const, scopeId: grant.id, ownerOrgId: organization.id, projectId: project.id, eventType: EventType.projectGrantMemberAdded };
  return { details: await addMember(deps, caller, target, input.userId, input.roles) };
}

export async function removeProjectGrantMember(deps: Deps, caller: Caller, input: GrantMemberInput) {
  const { organization, grant } = await selectProjectGrant(deps, caller, input, "project.grant.member.write");
  const membership = await deps.store.findMembership(input.userId, "project_grant", grant.id);
  if (!membership) throw notFound("member.not_found", "the user is not a member of this grant", { userId: input.userId });
  const span = await deps.store.aggregateSpan("member", membership.id);
  const events = await commitAs(deps, caller, {
    writes: [{ kind: "membership.delete", id: membership.id }],
    events: [
      {
        aggregateType: "member",
        aggregateId: membership.id,
        type: EventType.projectGrantMemberRemoved,
        payload: { userId: input.userId, level: "project_grant", scopeId: grant.id },
        resourceOwner: organization.id,
      },
    ],
  });
  return { details: detailsOfChange(events, span?.first) };
}
