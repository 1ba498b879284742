import { organizationAccessDenied, selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { can } from "../domain/authorization.js";
import { readDetails } from "./details.js";

/** Reads an organization; it is selected like `x-service-orgid`, so a stranger learns nothing of it. */
export async function getOrganization(deps: Deps, caller: Caller, organizationId: string) {
  // Checked on the id sent, before the look-up: without org.read there, an existing and an unknown
  // organization get the same answer.
  if (!can(caller.principal, "org.read", { orgId: organizationId })) throw organizationAccessDenied(organizationId);
  const organization = await selectOrganization(deps, { ...caller, requestedOrgId: organizationId });
  return { organization, details: await readDetails(deps.store, "org", organization.id) };
}
