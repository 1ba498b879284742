import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, canInstanceWide } from "../domain/authorization.js";
import { DomainError, notFound } from "../domain/errors.js";
import { detailsOfChange } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import type { RowWrite } from "../store/commit.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import { spanOf } from "../queries/details.js";

/**
 * Removes an identity provider of the selected organization, or of the instance, with every user's
 * link to it, in one transaction: each link's removal is a `user.idp_link.removed` event on that
 * user (in the user's organization; links to an instance-level IDP span organizations). Permission
 * is checked on the selected organization before the IDP is looked up, so strangers learn nothing.
 * An instance-level IDP, whose links reach into every organization, is removable only with
 * `iam.write`; without it, it is not the organization's to remove: not_found, as UpdateIdentityProvider
 * answers, so the answer is the same as for an id that names nothing.
 */
export async function removeIdentityProvider(deps: Deps, caller: Caller, idpId: string, request: Expected = {}) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.idp.write", { orgId: organization.id });
  const removableOwners = canInstanceWide(caller.principal, "iam.write") ? [organization.id, caller.principal.instanceId] : [organization.id];
  const idp = await deps.store.findIdentityProviderById(idpId);
  if (!idp || !removableOwners.includes(idp.ownerId)) throw idpNotFound(idpId);

  const [span, links] = await Promise.all([spanOf(deps.store, "idp", idp.id), deps.store.listIdpLinksOfIdp(idp.id)]);
  const writes: RowWrite[] = [
    ...links.map((link): RowWrite => ({ kind: "userIdpLink.delete", idpId: idp.id, externalUserId: link.externalUserId })),
    { kind: "identityProvider.delete", id: idp.id },
  ];
  const events: NewEvent[] = [
    ...links.map((link): NewEvent => ({
      aggregateType: "user",
      aggregateId: link.userId,
      type: EventType.userIdpLinkRemoved,
      payload: { idpId: idp.id, externalUserId: link.externalUserId, cause: EventType.idpRemoved },
      resourceOwner: link.orgId,
    })),
    {
      aggregateType: "idp",
      aggregateId: idp.id,
      type: EventType.idpRemoved,
      payload: { name: idp.name, instanceLevel: idp.orgId === null, linksRemoved: links.length },
      resourceOwner: idp.ownerId,
    },
  ];
  try {
    return { details: detailsOfChange(await commitAs(deps, caller, { writes, events, expect: expectationOf("idp", idp.id, request) }), span.first) };
  } catch (error) {
    // Removed concurrently: answer as the call after it would.
    if (error instanceof DomainError && error.reason === "store.condition_failed" && !(await deps.store.findIdentityProviderById(idp.id))) {
      throw idpNotFound(idp.id);
    }
    throw error;
  }
}

const idpNotFound = (idpId: string) => notFound("idp.not_found", "the identity provider does not exist", { idpId });
