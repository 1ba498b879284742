import type { Caller, Deps } from "../context.js";
import { requireCanGrantRoles } from "../domain/authorization.js";
import { DomainError, failedPrecondition, notFound } from "../domain/errors.js";
import { type Details, detailsOfChange } from "../events/details.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import type { MembershipRow } from "../store/rows.js";
import type { RowWrite } from "../store/commit.js";
import type { MembershipTarget } from "./add-member.js";
import { spanOf } from "../queries/details.js";

/** The role the instance must always keep one holder of. */
export const LAST_OWNER_ROLE = "IAM_OWNER";

/** Where a membership is removed from; `eventType` is the level's `*.member.removed`. */
export type RemovalTarget = MembershipTarget & {
  /** A role the scope must never lose its last holder of (IAM_OWNER for the instance). */
  keepLastHolderOf?: string;
};

/**
 * Removes one user's membership (all its roles) at one level, with its `*.member.removed` event on the
 * membership's `member` aggregate. Shared by instance, organization, project and grant members.
 *
 * The caller has checked permission on the target already. Removing acts on a principal's rights, so
 * the same ceiling as granting applies: the caller may only take away roles it could grant there
 * (`role.not_grantable`). Taking away cannot escalate, but a caller must not strip a role it does
 * not itself hold in full from someone who does.
 *
 * The delete is conditional: of two concurrent removals one wins and the other gets not_found, as a
 * later call would; with `keepLastHolderOf`, of two concurrent removals of the last two holders one
 * is refused.
 */
export async function removeMember(deps: Deps, caller: Caller, target: RemovalTarget, userId: string, request: Expected = {}): Promise<Details> {
  const membership = await deps.store.findMembership(userId, target.level, target.scopeId);
  if (!membership) throw memberNotFound(userId);
  requireCanGrantRoles(caller.principal, membership.roles, target);
  const keep = target.keepLastHolderOf;
  // Stryker disable next-line ConditionalExpression,EqualityOperator: the fast answer's condition, see the next line: the store's keepRoleHolder guard answers the same member.last_owner without it
  const wouldLeaveNoHolder = keep !== undefined && membership.roles.includes(keep) && (await deps.store.countRoleHolders(target.level, target.scopeId, keep, membership.id)) === 0;
  // Stryker disable next-line ConditionalExpression,BlockStatement: a fast answer only; without it the store's keepRoleHolder guard fails the commit and the catch below gives the same member.last_owner
  if (wouldLeaveNoHolder) throw lastHolder(keep);
  const span = await spanOf(deps.store, "member", membership.id);
  try {
    const events = await commitAs(deps, caller, {
      expect: expectationOf("member", membership.id, request),
      writes: [{ kind: "membership.delete", id: membership.id, ...(keep ? { keepRoleHolder: keep } : {}) }],
      events: [membershipRemoval(membership, target).event],
    });
    return detailsOfChange(events, span.first);
  } catch (error) {
    if (!(error instanceof DomainError && error.reason === "store.condition_failed")) throw error;
    // Changed concurrently: answer as the call after it would.
    if (!(await deps.store.findMembership(userId, target.level, target.scopeId))) throw memberNotFound(userId);
    if (keep) throw lastHolder(keep);
    throw error;
  }
}

/**
 * The write and event that remove one membership, for commands that remove memberships as part of a
 * larger change (a removed project or grant takes its members with it, in its own transaction).
 */
export function membershipRemoval(membership: MembershipRow, target: MembershipTarget, cause?: string): { write: RowWrite; event: NewEvent } {
  return {
    write: { kind: "membership.delete", id: membership.id },
    event: {
      aggregateType: "member",
      aggregateId: membership.id,
      type: target.eventType,
      // An absent cause is left out of the stored JSON (JSON.stringify drops undefined).
      payload: { userId: membership.userId, roles: membership.roles, level: target.level, scopeId: target.scopeId, cause },
      resourceOwner: target.ownerOrgId,
    },
  };
}

const memberRemovedEvents: Record<MembershipRow["level"], string> = {
  instance: EventType.instanceMemberRemoved,
  org: EventType.orgMemberRemoved,
  project: EventType.projectMemberRemoved,
  project_grant: EventType.projectGrantMemberRemoved,
};

/** The removal target of a stored membership, with its level's `*.member.removed` event. */
export function removalTargetOf(membership: MembershipRow): MembershipTarget {
  return {
    level: membership.level,
    scopeId: membership.scopeId,
    ownerOrgId: membership.ownerOrgId,
    // Stryker disable next-line ObjectLiteral: a removal never reads the target's projectId (kept for the type's other users)
    ...(membership.projectId ? { projectId: membership.projectId } : {}),
    eventType: memberRemovedEvents[membership.level],
  };
}

const memberNotFound = (userId: string) => notFound("member.not_found", "the user is not a member here", { userId });
const lastHolder = (role: string) => failedPrecondition("member.last_owner", `the last ${role} cannot be removed`, { role });
