import { requireInstancePermission } from "../access/require-instance-permission.js";
import { organizationAccessDenied, selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, can } from "../domain/authorization.js";
import { uniquenessKey } from "../domain/names.js";
import type { OrganizationRow } from "../store/rows.js";
import { readDetails, withDetails } from "./details.js";
import { listMembersOfScope } from "./members.js";
import { type PageRequest, readPage } from "./paging.js";

/** Reads an organization; it is selected like `x-service-orgid`, so a stranger learns nothing of it. */
export async function getOrganization(deps: Deps, caller: Caller, organizationId: string) {
  // Checked on the id sent, before the look-up: without org.read there, an existing and an unknown
  // organization get the same answer.
  if (!can(caller.principal, "org.read", { orgId: organizationId })) throw organizationAccessDenied(organizationId);
  const organization = await selectOrganization(deps, { ...caller, requestedOrgId: organizationId });
  return { organization, details: await readDetails(deps.store, "org", organization.id) };
}

/** The instance's organizations in creation order; the name filter matches a part, case-insensitively. */
export async function listOrganizations(
  deps: Deps,
  caller: Caller,
  input: { pageSize: number; pageToken: string; name: string; state?: OrganizationRow["state"] },
) {
  requireInstancePermission(caller, "iam.read");
  const name = input.name.trim();
  const filter = {
    instanceId: caller.principal.instanceId,
    ...(name ? { nameContains: uniquenessKey(name) } : {}),
    ...(input.state ? { state: input.state } : {}),
  };
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listOrganizationsPage({ ...filter, ...window }),
    () => deps.store.countOrganizations(filter),
  );
  return { organizations: await withDetails(deps.store, "org", rows), total, nextPageToken };
}

/** Members of the selected organization; `org.read` there (who holds rights is part of reading it). */
export async function listOrganizationMembers(deps: Deps, caller: Caller, input: PageRequest) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.read", { orgId: organization.id });
  return listMembersOfScope(deps, "org", organization.id, input);
}
