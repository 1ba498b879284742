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

/** Links removed per commit: each transaction stays short, however many users an IDP has (scale finding 6). */
export const IDP_LINKS_PER_COMMIT = 500;

/**
 * Removes an identity provider of the selected organization, or of the instance, with every user's
 * link to it: each link's removal is a `user.idp_link.removed` event on that user (in the user's
 * organization; links to an instance-level IDP span organizations). The links go in commits of at most
 * `linksPerCommit` (one transaction each, so an IDP with a million users does not hold the server for one
 * transaction of a million events), the IDP itself with the last. A call that fails part-way has removed some
 * links and can be repeated. Permission is checked on
 * the selected organization before the IDP is looked up, so strangers learn nothing. An instance-level IDP,
 * whose links reach into every organization, is removable only with `iam.write`; without it, it is not the
 * organization's to remove: not_found, as UpdateIdentityProvider answers, so the answer is the same as for an
 * id that names nothing.
 */
export async function removeIdentityProvider(deps: Deps, caller: Caller, idpId: string, request: Expected = {}, linksPerCommit = IDP_LINKS_PER_COMMIT) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.idp.write", { orgId: organization.id });
  const removableOwners = canInstanceWide(caller.principal, "iam.write") ? [organization.id, caller.principal.instanceId] : [organization.id];
  const idp = await deps.store.findIdentityProviderById(idpId);
  if (!idp || !removableOwners.includes(idp.ownerId)) throw idpNotFound(idpId);

  const span = await spanOf(deps.store, "idp", idp.id);
  // Every commit carries the caller's expected sequence: the links' events are the users', so it holds from one to
  // the next unless the IDP itself changed meanwhile.
  const expect = expectationOf("idp", idp.id, request);
  let removed = 0;
  try {
    for (;;) {
      const links = await deps.store.listIdpLinksOfIdp(idp.id, linksPerCommit);
      removed += links.length;
      const last = links.length < linksPerCommit;
      const writes: RowWrite[] = links.map((link): RowWrite => ({ kind: "userIdpLink.delete", idpId: idp.id, externalUserId: link.externalUserId }));
      const events: NewEvent[] = links.map((link): NewEvent => ({
        aggregateType: "user",
        aggregateId: link.userId,
        type: EventType.userIdpLinkRemoved,
        payload: { idpId: idp.id, externalUserId: link.externalUserId, cause: EventType.idpRemoved },
        resourceOwner: link.orgId,
      }));
      if (last) {
        writes.push({ kind: "identityProvider.delete", id: idp.id });
        events.push({
          aggregateType: "idp",
          aggregateId: idp.id,
          type: EventType.idpRemoved,
          payload: { name: idp.name, instanceLevel: idp.orgId === null, linksRemoved: removed },
          resourceOwner: idp.ownerId,
        });
      }
      const stored = await commitAs(deps, caller, { writes, events, expect });
      if (last) return { details: detailsOfChange(stored, span.first) };
    }
  } catch (error) {
    // Removed concurrently: answer as the call after it would.
    if (error instanceof DomainError && error.reason === "store.condition_failed" && !(await deps.store.findIdentityProviderById(idp.id))) {
      throw idpNotFound(idp.id);
    }
    throw error;
  }
}

const idpNotFound = (idpId: string) => notFound("idp.not_found", "the identity provider does not exist", { idpId });
