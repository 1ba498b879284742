import type { Caller, Deps } from "../context.js";
import { mayMakeMember, requireCanGrantRoles } from "../domain/authorization.js";
import { failedPrecondition } from "../domain/errors.js";
import { checkMemberRoles } from "../domain/membership.js";
import type { MembershipLevel } from "../domain/roles.js";
import { type Details, detailsOfCreate } from "../events/details.js";
import { commitAs } from "./commit-as.js";
import { revokeTokensBeyondIssuer } from "./personal-access-token.js";

/** Where a membership is added: its level and scope, and the event type that records it. */
export interface MembershipTarget {
  level: MembershipLevel;
  scopeId: string;
  ownerOrgId: string;
  projectId?: string;
  /** A grant's granted organization, whose users may be made members of the grant (mayMakeMember). */
  grantedOrgId?: string;
  eventType: string;
}

/**
 * Adds a user with roles at one level. Shared by instance, organization, project and grant members:
 * the rules are the same everywhere (roles must be of the level, the user must exist, no duplicates).
 * Each membership is its own `member` aggregate, so it has details of its own.
 * The caller has checked permission on the target already; the privilege ceiling (the caller holds
 * every permission of each role it grants, there) is checked here, for every level alike.
 */
export async function addMember(deps: Deps, caller: Caller, target: MembershipTarget, userId: string, requestedRoles: string[]): Promise<Details> {
  const roles = checkMemberRoles(target.level, requestedRoles);
  requireCanGrantRoles(caller.principal, roles, target);
  const user = await deps.store.findUserById(userId);
  // A user the caller may not make a member here is answered as one that does not exist: strangers learn nothing.
  if (!user || user.instanceId !== caller.principal.instanceId || !mayMakeMember(caller.principal, user.orgId, target)) {
    throw failedPrecondition("user.not_found", "the user does not exist", { userId });
  }
  const membershipId = deps.ids.next();
  const revoked = await revokeTokensBeyondIssuer(deps, userId, user.orgId, roles, target);
  const events = await commitAs(deps, caller, {
    writes: [
      ...revoked.writes,
      {
        kind: "membership.insert",
        row: {
          id: membershipId,
          userId,
          level: target.level,
          scopeId: target.scopeId,
          ownerOrgId: target.ownerOrgId,
          projectId: target.projectId ?? null,
          roles,
        },
        checkedTokens: revoked.checkedTokens,
      },
    ],
    events: [
      ...revoked.events,
      {
        aggregateType: "member",
        aggregateId: membershipId,
        type: target.eventType,
        payload: { userId, roles, level: target.level, scopeId: target.scopeId },
        resourceOwner: target.ownerOrgId,
      },
    ],
  });
  return detailsOfCreate(events);
}
