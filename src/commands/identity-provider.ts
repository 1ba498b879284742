import { requireInstancePermission } from "../access/require-instance-permission.js";
import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { notFound } from "../domain/errors.js";
import { uniquenessKey } from "../domain/names.js";
import { checkHttpsUrl } from "../domain/urls.js";
import { detailsOfChange, detailsOfCreate } from "../events/details.js";
import { EventType } from "../events/types.js";
import { spanOf } from "../queries/details.js";
import { sealSecret } from "../support/secret-box.js";
import { commitAs, detailsOfNoChange, type Expected, expectationOf } from "./commit-as.js";

const DEFAULT_SCOPES = ["openid", "profile", "email"];

/** Associated data binding a sealed client secret to its provider. */
export const idpSecretContext = (idpId: string) => `idp:${idpId}:client_secret`;

export interface CreateIdentityProviderInput {
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  stylingType: number;
  autoRegister: boolean;
  instanceLevel: boolean;
}

/** Creates a generic OIDC provider of the selected organization, or of the instance (needs iam.write). */
export async function createIdentityProvider(deps: Deps, caller: Caller, input: CreateIdentityProviderInput) {
  let orgId: string | null = null;
  if (input.instanceLevel) {
    requireInstancePermission(caller, "iam.write");
  } else {
    const organization = await selectOrganization(deps, caller);
    authorize(caller.principal, "org.idp.write", { orgId: organization.id });
    orgId = organization.id;
  }
  checkHttpsUrl(input.issuer, "issuer", "idp.issuer_invalid");
  const ownerId = orgId ?? caller.principal.instanceId;
  const idpId = deps.ids.next();
  const scopes = input.scopes.length > 0 ? [...new Set(input.scopes)] : DEFAULT_SCOPES;
  // Everything but the secret: safe for the row and the event alike.
  // Everything but the secret: safe for the row and the event alike.
  const settings = { name: input.name, issuer: input.issuer, clientId: input.clientId, scopes, stylingType: input.stylingType, autoRegister: input.autoRegister };
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "identityProvider.insert",
        row: {
          id: idpId,
          instanceId: caller.principal.instanceId,
          orgId,
          ownerId,
          nameKey: uniquenessKey(input.name),
          clientSecretSealed: sealSecret(deps.masterKey, input.clientSecret, idpSecretContext(idpId)),
          ...settings,
        },
      },
    ],
    events: [
      {
        aggregateType: "idp",
        aggregateId: idpId,
        type: EventType.idpAdded,
        payload: { ...settings, instanceLevel: input.instanceLevel },
        resourceOwner: ownerId,
      },
    ],
  });
  return { idpId, details: detailsOfCreate(events) };
}

/**
 * SPEC 4.3 (deprecated): replaces every field of an IDP of the selected organization; what was not
 * sent arrives here as its empty/default value. Instance-level IDPs are not the organization's:
 * not_found. A replacement equal to what is stored changes nothing: no event, current details.
 */
export async function updateIdentityProvider(
  deps: Deps,
  caller: Caller,
  input: { idpId: string; name: string; stylingType: number; autoRegister: boolean } & Expected,
) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.idp.write", { orgId: organization.id });
  const idp = await deps.store.findIdentityProviderById(input.idpId);
  if (!idp || idp.orgId !== organization.id) throw notFound("idp.not_found", "the identity provider does not exist in this organization", { idpId: input.idpId });
  const fields = { name: input.name, nameKey: uniquenessKey(input.name), stylingType: input.stylingType, autoRegister: input.autoRegister };
  const expect = expectationOf("idp", idp.id, input);
  if (idp.name === fields.name && idp.stylingType === fields.stylingType && idp.autoRegister === fields.autoRegister) {
    return { details: await detailsOfNoChange(deps, { type: "idp", id: idp.id }, expect) };
  }
  const span = await spanOf(deps.store, "idp", idp.id);
  const events = await commitAs(deps, caller, {
    expect,
    writes: [{ kind: "identityProvider.replace", id: idp.id, fields }],
    events: [
      {
        aggregateType: "idp",
        aggregateId: idp.id,
        type: EventType.idpChanged,
        payload: { name: fields.name, stylingType: fields.stylingType, autoRegister: fields.autoRegister },
        resourceOwner: organization.id,
      },
    ],
  });
  return { details: detailsOfChange(events, span.first) };
}
