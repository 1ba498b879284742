import type { Caller, Deps } from "../context.js";
import { membershipsBinding, type Reach, requireCoversPrincipal } from "../domain/authorization.js";
import type { Membership } from "../domain/principal.js";
import { membershipFingerprint } from "../store/fingerprints.js";
import type { MembershipRow, UserRow } from "../store/rows.js";

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
 * holds that binds it for this `reach` (src/domain/authorization.ts membershipsBinding). Call it after the
 * operation's own permission check, before acting on the target's credentials or identity. Returns the
 * fingerprint of all the target's memberships (undefined for oneself), for a write that must not land if
 * they changed meanwhile.
 */
export async function requireCeilingOver(deps: Deps, caller: Caller, target: Pick<UserRow, "id" | "orgId">, reach: Reach = "credentials"): Promise<string | undefined> {
  if (target.id === caller.principal.userId) return undefined;
  const rows = await deps.store.listMembershipsOfUser(target.id);
  const memberships = rows.map(membershipOf);
  const grantedOrgs = await grantedOrganizationsOfGrants(deps, memberships);
  requireCoversPrincipal(caller.principal, membershipsBinding(reach, target.orgId, memberships, (grantId) => grantedOrgs.get(grantId)));
  return membershipFingerprint(rows);
}

/** The granted organization of each grant the user is a member of (membershipsBinding judges what they mean). */
async function grantedOrganizationsOfGrants(deps: Deps, memberships: readonly Membership[]): Promise<Map<string, string>> {
  // Stryker disable next-line MethodExpression,ConditionalExpression: only a grant's id names a grant, so looking up the others' ids too finds nothing more
  const grantIds = memberships.filter((m) => m.level === "project_grant").map((m) => m.scopeId);
  const grants = await Promise.all(grantIds.map((id) => deps.store.findProjectGrantById(id)));
  // Stryker disable next-line ArrayDeclaration: a member's grant exists (a grant's removal removes its members in the same write), so the fallback never runs
  return new Map(grants.flatMap((grant) => (grant ? [[grant.id, grant.grantedOrgId] as const] : [])));
}
