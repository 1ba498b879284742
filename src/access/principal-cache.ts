import type { Store } from "../store/store.js";
import type { MembershipRow, OrganizationRow, TokenRow, UserRow } from "../store/rows.js";

/** The rows a principal is made of, as read for one token id. */
export interface AccessRows {
  token?: TokenRow;
  user?: UserRow;
  organization?: OrganizationRow;
  memberships: MembershipRow[];
}

/** Reads a token's rows from the store: four reads (token, user, organization, memberships). */
export async function readAccessRows(store: Store, tokenId: string): Promise<AccessRows> {
  const token = await store.findTokenById(tokenId);
  const user = token && (await store.findUserById(token.userId));
  // Stryker disable next-line ObjectLiteral,ArrayDeclaration: without a token or a user no principal is made (principalOf refuses first), so the memberships are never read
  if (!token || !user) return { token, user, memberships: [] };
  const [organization, memberships] = await Promise.all([store.findOrganizationById(user.orgId), store.listMembershipsOfUser(user.id)]);
  return { token, user, organization, memberships };
}

/**
 * The rows of recently used tokens, so an authenticated call does not read four rows every time. An entry is used
 * only while the store's access version is the one it was read under: any commit that changes a token, a user's
 * flags, an organization's state or a membership (or any write by another process) drops them all, so the very
 * next call obeys the change. What depends on the time (expiry) or on the presented secret is still checked on
 * every call by `authenticate`.
 * Only tokens whose rows were found are kept (unknown ids would let any caller fill memory), at most `maxEntries`,
 * the least recently used going first.
 */
export function createPrincipalCache(store: Store, maxEntries = 10_000) {
  const entries = new Map<string, { version: string; rows: AccessRows }>();
  return async (tokenId: string): Promise<AccessRows> => {
    const version = await store.accessVersion();
    const cached = entries.get(tokenId);
    entries.delete(tokenId);
    if (cached?.version === version) {
      entries.set(tokenId, cached);
      return cached.rows;
    }
    const rows = await readAccessRows(store, tokenId);
    if (rows.user) {
      entries.set(tokenId, { version, rows });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    }
    return rows;
  };
}
