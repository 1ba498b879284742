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
 * only while its user's access version (Store.accessVersion) is the one it was read under: a commit that may change
 * that user's principal (its token, its flags, its memberships) or anyone's (any write on an organization's row but
 * its insert, a removed membership or token, any write by another process) drops it, so the very next call obeys the
 * change; a new membership of another user does not. The whole organization row counts, not just its state: a call
 * in the caller's own organization uses the cached row (selectOrganization), so no write on an organization's row may
 * join store/commit.ts's ACCESS_NEUTRAL but its insert. What depends on the time (expiry) or on the presented secret
 * is still checked on every call by `authenticate`.
 * Only tokens whose rows were found are kept (unknown ids would let any caller fill memory), at most `maxEntries`,
 * the least recently used going first.
 */
export function createPrincipalCache(store: Store, maxEntries = 10_000) {
  const entries = new Map<string, { version: string; rows: AccessRows & { user: UserRow } }>();
  return async (tokenId: string): Promise<AccessRows> => {
    const cached = entries.get(tokenId);
    entries.delete(tokenId);
    // A token's user never changes, so the cached one names whose version to compare.
    if (cached && (await store.accessVersion(cached.rows.user.id)) === cached.version) {
      entries.set(tokenId, cached);
      return cached.rows;
    }
    // The user is known only once the rows are read. Their version, read after the rows, is the one the rows were read
    // under only if no access-changing commit came in between: otherwise the rows are used for this call, not kept.
    const before = await store.accessVersion();
    const rows = await readAccessRows(store, tokenId);
    const user = rows.user;
    if (!user) return rows;
    const version = await store.accessVersion(user.id);
    if ((await store.accessVersion()) === before) {
      entries.set(tokenId, { version, rows: { ...rows, user } });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    }
    return rows;
  };
}
