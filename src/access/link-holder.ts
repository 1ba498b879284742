import type { Caller, Deps } from "../context.js";
import { notFound, unauthenticated } from "../domain/errors.js";
import { requireMaySignIn } from "../domain/user-state.js";
import type { OrganizationRow, UserRow } from "../store/rows.js";

/** The user a mailed link names, their organization, and the user as the caller of what the page runs. */
export interface LinkHolder {
  user: UserRow;
  organization: OrganizationRow;
  caller: Caller;
}

/**
 * The human user of the organization a link from a mail names (`userID`, `orgID`). The code in the link is the
 * credential that is checked later, by the command the page runs; until then nothing about the user is shown. An
 * unknown user, a user of another organization, a machine user and an unknown organization are one answer,
 * not_found `link.invalid`, so a link tells nobody more than that it does not work.
 *
 * The page acts as the user themself (the caller VerifyEmail allows): a deactivated or locked user, or one of a
 * deactivated organization, is refused as their tokens are (unauthenticated `user.inactive`, `user.locked`,
 * `organization.inactive`), so a hold an admin put on an account also holds on its links.
 */
export async function resolveLinkHolder(deps: Deps, link: { userId: string; orgId: string }): Promise<LinkHolder> {
  const user = await deps.store.findUserById(link.userId);
  const organization = user && user.orgId === link.orgId && user.type === "human" ? await deps.store.findOrganizationById(user.orgId) : undefined;
  // Stryker disable next-line StringLiteral: the pages answer by this reason alone (pages.ts), never with the message
  if (!user || !organization) throw notFound("link.invalid", "the link does not name a user that can use it");
  requireMaySignIn(user);
  // Same reason as authentication gives a token of a user of a deactivated organization.
  // Stryker disable next-line StringLiteral: the pages answer every unauthenticated hold alike (ON_HOLD), with neither reason nor message
  if (organization.state === "inactive") throw unauthenticated("organization.inactive", "the user's organization is deactivated");
  return {
    user,
    organization,
    caller: {
      // No token: the code the page sends along is the credential, checked by the command itself.
      // Stryker disable next-line StringLiteral,ArrayDeclaration: read only to re-authenticate a streaming call (currentPrincipal), which no page makes; a non-membership item grants nothing
      principal: { userId: user.id, orgId: user.orgId, instanceId: user.instanceId, tokenId: "", memberships: [] },
      requestedOrgId: undefined,
    },
  };
}

