import type { Deps } from "../context.js";
import { unauthenticated } from "../domain/errors.js";
import type { Principal } from "../domain/principal.js";
import { parseToken } from "../domain/token.js";
import { requireMaySignIn } from "../domain/user-state.js";
import { constantTimeEqual, sha256Hex } from "../support/crypto.js";
import { type AccessRows, readAccessRows } from "./principal-cache.js";
import { membershipOf } from "./privilege-ceiling.js";

/** One answer for every token that makes no caller: unknown, malformed, wrong secret, or its user gone. */
const tokenInvalid = () => unauthenticated("auth.token_invalid", "the token is not valid");

/**
 * Turns an `Authorization` header into the calling principal, or throws unauthenticated.
 * Missing, malformed, unknown and expired tokens get distinct reasons; none reveals anything a
 * caller without the token could use. A valid token of an inactive or locked user is refused with
 * `user.inactive` / `user.locked`, and one of a user of a deactivated organization with
 * `organization.inactive`: only its holder learns that.
 */
export async function authenticate(
  deps: Deps,
  authorization: string | null,
  loadRows: (tokenId: string) => Promise<AccessRows> = (tokenId) => readAccessRows(deps.store, tokenId),
): Promise<Principal> {
  if (!authorization) throw unauthenticated("auth.missing", "send Authorization: Bearer <personal access token>");
  // Stryker disable next-line MethodExpression: HTTP parsers (node's included) strip a header value's surrounding blanks already
  const match = /^Bearer ([\x21-\x7e]+)$/i.exec(authorization.trim());
  if (!match?.[1]) throw unauthenticated("auth.malformed", "the Authorization header must be: Bearer <token>");
  const parsed = parseToken(match[1]);
  if (!parsed) throw tokenInvalid();
  const rows = await loadRows(parsed.tokenId);
  if (!rows.token || !constantTimeEqual(sha256Hex(parsed.secret), rows.token.secretHash)) throw tokenInvalid();
  return principalOf(deps, rows);
}

/**
 * The principal of a token whose secret was checked when its call began, as its rows are now: a call that outlives its
 * authentication (a streaming import) asks again, so a token removed or expired, a user deactivated or locked, an
 * organization deactivated or a role removed meanwhile stops it as it would refuse a new call.
 */
export async function currentPrincipal(deps: Deps, principal: Principal): Promise<Principal> {
  return principalOf(deps, await readAccessRows(deps.store, principal.tokenId));
}

/** What a found token's rows make of the caller, or the reason they make no caller (after its secret was checked). */
function principalOf(deps: Deps, { token, user, organization, memberships }: AccessRows): Principal {
  if (!token) throw tokenInvalid();
  if (token.expiresAt !== null && token.expiresAt <= deps.clock.now().getTime()) {
    throw unauthenticated("auth.token_expired", "the token has expired");
  }
  // A user's tokens are removed in the commit that removes the user: only a removal racing this call gets here.
  if (!user) throw tokenInvalid();
  // Current on every call (read, or cached only until a change), so a deactivation or lock refuses the very next
  // call and lifting it restores it.
  requireMaySignIn(user);
  // Likewise for the user's organization: deactivating it shuts out all its users at once, whatever roles
  // they hold; nothing is revoked, so reactivating it lets them back in.
  // Stryker disable next-line OptionalChaining: a user's organization exists as long as the user does (removing it removes its users)
  if (organization?.state === "inactive") throw unauthenticated("organization.inactive", "the user's organization is deactivated");
  return {
    userId: user.id,
    orgId: user.orgId,
    instanceId: user.instanceId,
    tokenId: token.id,
    memberships: memberships.map(membershipOf),
  };
}
