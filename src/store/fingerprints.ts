import type { MembershipRow, TokenRow } from "./rows.js";

/**
 * Compact descriptions of what a command checked, which a conditional write compares with what the
 * transaction sees: equal strings mean nothing changed in between. Pure, so commands (from their
 * reads) and every storage engine (from its rows) compute them alike.
 */

/** A user's memberships: which, and with which roles. */
export function membershipFingerprint(rows: readonly Pick<MembershipRow, "id" | "roles">[]): string {
  return rows
    .map((row) => `${row.id}:${[...row.roles].sort().join(",")}`)
    .sort()
    .join(";");
}

/** A user's tokens issued by someone else (the ones a role grant may have to revoke). */
export function tokenFingerprint(userId: string, tokens: readonly Pick<TokenRow, "id" | "issuerUserId">[]): string {
  return tokens
    .filter((token) => token.issuerUserId !== null && token.issuerUserId !== userId)
    .map((token) => token.id)
    .sort()
    .join(";");
}
