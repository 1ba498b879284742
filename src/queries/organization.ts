import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { readDetails } from "./details.js";

/** Reads an organization; it is selected like `x-service-orgid`, so a stranger learns nothing of it. */
export async function getOrganization(deps: Deps, caller: Caller, organizationId: string) {
  const organization = await selectOrganization(deps, { ...caller, requestedOrgId: organizationId });
  authorize(caller.principal, "org.read", { orgId: organization.id });
  return { organization, details: await readDetails(deps.store, "org", organization.id) };
}
