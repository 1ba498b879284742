import type { ServiceImpl } from "@connectrpc/connect";
import type { IdentityProviderService } from "../../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { createIdentityProvider, updateIdentityProvider } from "../../commands/identity-provider.js";
import { removeIdentityProvider } from "../../commands/identity-provider-lifecycle.js";
import type { Deps } from "../../context.js";
import type { Details } from "../../events/details.js";
import { getIdentityProvider, listIdentityProviders } from "../../queries/identity-provider.js";
import type { IdentityProviderRow } from "../../store/rows.js";
import { callerOf } from "../caller.js";
import { listDetails, toDetailsMessage } from "../convert.js";

/** A stored IDP → the `IdentityProvider` message; the sealed client secret is never copied. */
function toIdentityProviderMessage(idp: IdentityProviderRow, details: Details) {
  return {
    idpId: idp.id,
    name: idp.name,
    issuer: idp.issuer,
    clientId: idp.clientId,
    scopes: idp.scopes,
    stylingType: idp.stylingType,
    autoRegister: idp.autoRegister,
    instanceLevel: idp.orgId === null,
    details: toDetailsMessage(details),
  };
}

export function createIdentityProviderService(deps: Deps): ServiceImpl<typeof IdentityProviderService> {
  return {
    async createIdentityProvider(request, context) {
      const { idpId, details } = await createIdentityProvider(deps, callerOf(context), request);
      return { idpId, details: toDetailsMessage(details) };
    },
    async getIdentityProvider(request, context) {
      const { idp, details } = await getIdentityProvider(deps, callerOf(context), request.idpId);
      return { idp: toIdentityProviderMessage(idp, details) };
    },
    async listIdentityProviders(request, context) {
      const page = await listIdentityProviders(deps, callerOf(context), request);
      return {
        details: listDetails(page),
        idps: page.idps.map(({ row, details }) => toIdentityProviderMessage(row, details)),
      };
    },
    async updateIdentityProvider(request, context) {
      const { details } = await updateIdentityProvider(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async removeIdentityProvider(request, context) {
      const { details } = await removeIdentityProvider(deps, callerOf(context), request.idpId, request);
      return { details: toDetailsMessage(details) };
    },
  };
}
