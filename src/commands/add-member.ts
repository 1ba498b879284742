import type { Caller, Deps } from "../context.js";
import { commitAs } from "./commit-as.js";
import { failedPrecondition } from "../domain/errors.js";
import { checkMemberRoles } from "../domain/membership.js";
import type { MembershipLevel } from "../domain/roles.js";
import type { AggregateType } from "../events/event.js";
import { type Details, detailsOf, lastOf } from "../events/details.js";

/** Where a membership is added: its level and scope, and the aggregate whose event records it. */
export interface MembershipTarget {
  level: MembershipLevel;
  scopeId: string;
  ownerOrgId: string;
  projectId?: string;
  aggregate: { type: AggregateType; id: string };
  eventType: string;
}

/**
 * Adds a user with roles at one level. Shared by instance, organization, project and grant members:
 * the rules are the same everywhere (the user must exist, roles must be of the level, no duplicates).
 * The caller has checked permission on the target already.
 */
export async function addMember(deps: Deps, caller: Caller, target: MembershipTarget, userId: string, requestedRoles: string[]): Promise<Details> {
  const roles = checkMemberRoles(target.level, requestedRoles);
  const user = await deps.store.findUserById(userId);
  if (!user || user.instanceId !== caller.principal.instanceId) {
    throw failedPrecondition("user.not_found", "the user does not exist", { userId });
  }
  const span = await deps.store.aggregateSpan(target.aggregate.type, target.aggregate.id);
  const at = deps.clock.now();
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "membership.insert",
        row: {
          id: deps.ids.next(),
          userId,
          level: target.level,
          scopeId: target.scopeId,
          ownerOrgId: target.ownerOrgId,
          projectId: target.projectId ?? null,
          roles,
        },
      },
    ],
    events: [
      {
        aggregateType: target.aggregate.type,
        aggregateId: target.aggregate.id,
        type: target.eventType,
        payload: { userId, roles, scopeId: target.scopeId },
        resourceOwner: target.ownerOrgId,
      },
    ],
  }, at);
  return detailsOf(lastOf(events), span?.first.createdAt ?? at);
}
