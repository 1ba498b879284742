import { requireInstancePermission } from "../access/require-instance-permission.js";
import { organizationAccessDenied, selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, can } from "../domain/authorization.js";
import { uniquenessKey } from "../domain/names.js";
import type { OrganizationRow } from "../store/rows.js";
import { readDetails } from "./details.js";
import { listMembersOfScope } from "./members.js";
import { cutPage, pageLimit, positionAfter } from "./paging.js";

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
  const after = positionAfter(input.pageToken);
  const { limit, fetch } = pageLimit(input.pageSize);
  const [rows, total] = await Promise.all([
    deps.store.listOrganizationsPage({ ...filter, ...(after !== undefined ? { afterPosition: after } : {}), limit: fetch }),
    deps.store.countOrganizations(filter),
  ]);
  const { page, nextPageToken } = cutPage(rows, limit, (row) => row.position);
  const organizations = await Promise.all(page.map(async ({ row }) => ({ organization: row, details: await readDetails(deps.store, "org", row.id) })));
  return { organizations, total, nextPageToken };
}

/** Members of the selected organization; `org.read` there (who holds rights is part of reading it). */
export async function listOrganizationMembers(deps: Deps, caller: Caller, input: { pageSize: number; pageToken: string }) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.read", { orgId: organization.id });
  return listMembersOfScope(deps, "org", organization.id, input);
}
