import type { Caller, Deps } from "../context.js";
import { hasAnyRoleIn } from "../domain/authorization.js";
import { permissionDenied } from "../domain/errors.js";
import type { OrganizationRow } from "../store/rows.js";

/**
 * Resolves the organization a call acts in: `x-service-orgid` when sent, else the caller's own.
 * A named organization the caller has no role in is permission_denied, and so is one that does not
 * exist: existence is not revealed. The operation's own permission check follows.
 */
export async function selectOrganization(deps: Deps, caller: Caller): Promise<OrganizationRow> {
  const { principal, requestedOrgId } = caller;
  const orgId = requestedOrgId ?? principal.orgId;
  const organization = await deps.store.findOrganizationById(orgId);
  const foreign = requestedOrgId !== undefined && requestedOrgId !== principal.orgId;
  if (!organization || (foreign && !hasAnyRoleIn(principal, orgId))) throw organizationAccessDenied(orgId);
  return organization;
}

/** The one answer for an organization the caller may not see, whether it exists or not. */
export function organizationAccessDenied(organizationId: string) {
  return permissionDenied("organization.access_denied", "no permission in the selected organization", { organizationId });
}
