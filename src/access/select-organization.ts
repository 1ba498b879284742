import type { Caller, Deps } from "../context.js";
import { hasAnyRoleIn } from "../domain/authorization.js";
import { failedPrecondition, permissionDenied } from "../domain/errors.js";
import type { Principal } from "../domain/principal.js";
import type { OrganizationRow } from "../store/rows.js";

/**
 * Resolves the organization a call acts in: `x-service-orgid` when sent, else the caller's own.
 * A named organization the caller has no role in is permission_denied, and so is one that does not
 * exist: existence is not revealed. An inactive organization is selected only by callers holding an
 * instance role; anyone else with a role in it learns it is inactive (failed_precondition
 * `organization.inactive`), strangers still get the same answer as for an unknown one. The operation's
 * own permission check follows.
 */
export async function selectOrganization(deps: Deps, caller: Caller): Promise<OrganizationRow> {
  const { principal, requestedOrgId } = caller;
  const orgId = requestedOrgId ?? principal.orgId;
  // The caller's own organization was read (or cached, and as current as the principal) by its authentication.
  const own = orgId === principal.orgId ? caller.ownOrganization : undefined;
  const organization = own ?? (await deps.store.findOrganizationById(orgId));
  const foreign = requestedOrgId !== undefined && requestedOrgId !== principal.orgId;
  if (!organization || (foreign && !hasAnyRoleIn(principal, orgId))) throw organizationAccessDenied(orgId);
  if (organization.state === "inactive" && !hasInstanceRole(principal)) {
    throw failedPrecondition("organization.inactive", "the selected organization is deactivated", { organizationId: orgId });
  }
  return organization;
}

/**
 * Instance roles reach into every organization, also an inactive one (to read it and reactivate it). An instance
 * membership always holds a role (AddInstanceMember requires one; removing the last removes the membership).
 */
function hasInstanceRole(principal: Principal): boolean {
  return principal.memberships.some((membership) => membership.level === "instance");
}

/** The one answer for an organization the caller may not see, whether it exists or not. */
export function organizationAccessDenied(organizationId: string) {
  return permissionDenied("organization.access_denied", "no permission in the selected organization", { organizationId });
}
