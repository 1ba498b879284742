import { selectSelfOrManagedUser } from "../access/select-user.js";
import type { Caller, Deps } from "../context.js";

/** A user's tokens as they may be read back: ids and dates, never the secret or its hash. */
export async function listPersonalAccessTokens(deps: Deps, caller: Caller, userId: string) {
  const { user } = await selectSelfOrManagedUser(deps, caller, userId);
  const tokens = await deps.store.listTokensOfUser(user.id);
  return tokens.map((token) => ({
    tokenId: token.id,
    creationDate: new Date(token.createdAt),
    expirationDate: token.expiresAt === null ? undefined : new Date(token.expiresAt),
    issuerId: token.issuerUserId ?? "",
  }));
}
