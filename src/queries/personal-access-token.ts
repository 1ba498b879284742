import { selectSelfOrManagedUser } from "../access/select-user.js";
import type { Caller, Deps } from "../context.js";
import { readPage } from "./paging.js";

/** A page of a user's tokens as they may be read back: ids, dates and issuer, never the secret or its hash. */
export async function listPersonalAccessTokens(deps: Deps, caller: Caller, input: { userId: string; pageSize: number; pageToken: string }) {
  // Ids, dates and issuers hand the caller nothing of the user's: only the roles binding its lifecycle count.
  const { user } = await selectSelfOrManagedUser(deps, caller, input.userId, "lifecycle");
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listTokensPage({ userId: user.id, ...window }),
    () => deps.store.countTokensOfUser(user.id),
  );
  return {
    total,
    nextPageToken,
    tokens: rows.map((token) => ({
      tokenId: token.id,
      creationDate: new Date(token.createdAt),
      expirationDate: token.expiresAt === null ? undefined : new Date(token.expiresAt),
      issuerId: token.issuerUserId ?? "",
    })),
  };
}
