import type { Caller, Deps } from "../context.js";
import { requireCoversPrincipal } from "../domain/authorization.js";
import type { Membership } from "../domain/principal.js";
import type { MembershipRow } from "../store/rows.js";

/** A stored membership as authorization sees it. */
export function membershipOf(row: MembershipRow): Membership {
  return {
    level: row.level,
    scopeId: row.scopeId,
    ownerOrgId: row.ownerOrgId,
    ...(row.projectId ? { projectId: row.projectId } : {}),
    roles: row.roles,
  };
}

/**
 * Throws permission_denied `principal.privileged` unless the caller holds everything the target user
 * holds (src/domain/authorization.ts). Call it after the operation's own permission check, before
 * acting on the target's credentials or identity.
 */
export async function requireCeilingOver(deps: Deps, caller: Caller, targetUserId: string): Promise<void> {
  if (targetUserId === caller.principal.userId) return;
  const memberships = await deps.store.listMembershipsOfUser(targetUserId);
  requireCoversPrincipal(caller.principal, memberships.map(membershipOf));
}
