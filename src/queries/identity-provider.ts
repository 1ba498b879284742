import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { notFound } from "../domain/errors.js";
import { readDetails, withDetails } from "./details.js";
import { type PageRequest, readPage } from "./paging.js";

/** The selected organization's IDPs and the instance's: the ones its users can link to. */
async function visibleOwners(deps: Deps, caller: Caller): Promise<string[]> {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.idp.read", { orgId: organization.id });
  return [organization.id, caller.principal.instanceId];
}

export async function getIdentityProvider(deps: Deps, caller: Caller, idpId: string) {
  const owners = await visibleOwners(deps, caller);
  const idp = await deps.store.findIdentityProviderById(idpId);
  if (!idp || !owners.includes(idp.ownerId)) throw notFound("idp.not_found", "the identity provider does not exist", { idpId });
  return { idp, details: await readDetails(deps.store, "idp", idp.id) };
}

/** A page of the visible IDPs in creation order, with the total count. */
export async function listIdentityProviders(deps: Deps, caller: Caller, input: PageRequest) {
  const ownerIds = await visibleOwners(deps, caller);
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listIdentityProvidersPage({ ownerIds, ...window }),
    () => deps.store.countIdentityProviders({ ownerIds }),
  );
  return { idps: await withDetails(deps.store, "idp", rows), total, nextPageToken };
}
