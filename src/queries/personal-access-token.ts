import { selectSelfOrManagedUser } from "../access/select-user.js";
import type { Caller, Deps } from "../context.js";
import { cutPage, pageLimit, positionAfter } from "./paging.js";

/** A page of a user's tokens as they may be read back: ids, dates and issuer, never the secret or its hash. */
export async function listPersonalAccessTokens(deps: Deps, caller: Caller, input: { userId: string; pageSize: number; pageToken: string }) {
  const { user } = await selectSelfOrManagedUser(deps, caller, input.userId);
  const { limit, fetch } = pageLimit(input.pageSize);
  const afterPosition = positionAfter(input.pageToken);
  const [rows, total] = await Promise.all([
    deps.store.listTokensPage({ userId: user.id, ...(afterPosition !== undefined ? { afterPosition } : {}), limit: fetch }),
    deps.store.countTokensOfUser(user.id),
  ]);
  const { page, nextPageToken } = cutPage(rows, limit, (row) => row.position);
  return {
    total,
    nextPageToken,
    tokens: page.map(({ row: token }) => ({
      tokenId: token.id,
      creationDate: new Date(token.createdAt),
      expirationDate: token.expiresAt === null ? undefined : new Date(token.expiresAt),
      issuerId: token.issuerUserId ?? "",
    })),
  };
}
