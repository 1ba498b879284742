import { membershipOf } from "../access/privilege-ceiling.js";
import { selectManagedUser, selectSelfOrManagedUser } from "../access/select-user.js";
import type { Caller, Deps } from "../context.js";
import { missingForRoles } from "../domain/authorization.js";
import { DomainError, invalidArgument, notFound } from "../domain/errors.js";
import type { Membership } from "../domain/principal.js";
import { issueToken } from "../domain/token.js";
import { detailsOfChange } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import { tokenFingerprint } from "../store/fingerprints.js";
import type { RowWrite } from "../store/commit.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import { spanOf } from "../queries/details.js";

/**
 * Issues a personal access token for a user. A token is the user's credential, so besides
 * `user.write` the caller must hold everything the user holds (the privilege ceiling).
 */
export async function addPersonalAccessToken(deps: Deps, caller: Caller, input: { userId: string; expirationDate?: Date }) {
  const { organization, user, checkedMemberships } = await selectManagedUser(deps, caller, input.userId);
  const at = deps.clock.now();
  if (input.expirationDate && input.expirationDate.getTime() <= at.getTime()) {
    throw invalidArgument("token.expiration_past", "the expiration date must be in the future", [
      { field: "expiration_date", description: "must be in the future", rule: "token.expiration_past" },
    ]);
  }
  const issued = issueToken(deps.ids.next());
  const span = await spanOf(deps.store, "user", user.id);
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "token.insert",
        row: {
          id: issued.tokenId,
          userId: user.id,
          secretHash: issued.secretHash,
          expiresAt: input.expirationDate?.getTime() ?? null,
          createdAt: at.getTime(),
          issuerUserId: caller.principal.userId,
        },
        // A role granted to the user between the ceiling check and this commit fails the commit (undefined: no check).
        checkedMemberships,
      },
    ],
    events: [
      {
        aggregateType: "user",
        aggregateId: user.id,
        type: EventType.personalAccessTokenAdded,
        // The token itself never enters the log.
        payload: { tokenId: issued.tokenId, expirationDate: input.expirationDate?.toISOString() ?? null },
        resourceOwner: organization.id,
      },
    ],
  }, at);
  return { tokenId: issued.tokenId, token: issued.token, details: detailsOfChange(events, span.first) };
}

/**
 * Revokes a token: the row goes, so the very next call with it is unauthenticated (tokens are read
 * on every call). A user may always revoke its own tokens.
 */
export async function removePersonalAccessToken(deps: Deps, caller: Caller, input: { userId: string; tokenId: string } & Expected) {
  // Revoking hands the caller nothing: only the roles binding the user's lifecycle count (membershipsBinding).
  const { organization, user } = await selectSelfOrManagedUser(deps, caller, input.userId, "lifecycle");
  const token = await deps.store.findTokenById(input.tokenId);
  const gone = () => notFound("token.not_found", "the user has no such token", { tokenId: input.tokenId });
  if (!token || token.userId !== user.id) throw gone();
  const span = await spanOf(deps.store, "user", user.id);
  try {
    const events = await commitAs(deps, caller, {
      expect: expectationOf("user", user.id, input),
      writes: [{ kind: "token.delete", id: token.id }],
      events: [{ aggregateType: "user", aggregateId: user.id, type: EventType.personalAccessTokenRemoved, payload: { tokenId: token.id }, resourceOwner: organization.id }],
    });
    return { details: detailsOfChange(events, span.first) };
  } catch (error) {
    // Removed by a concurrent call between our read and our commit: it is gone either way.
    if (error instanceof DomainError && error.reason === "store.condition_failed") throw gone();
    throw error;
  }
}

/**
 * What granting `roles` at `where` to a user does to its tokens: every token issued by someone else
 * who could not grant those roles is revoked in the same commit. Otherwise a user manager could mint a
 * token for a user without roles and gain whatever that user is given later (the privilege ceiling
 * held at issuance, not after). A token the user issued itself, or the system issued, stays.
 */
export async function revokeTokensBeyondIssuer(
  deps: Pick<Deps, "store">,
  userId: string,
  resourceOwner: string,
  roles: readonly string[],
  where: Omit<Membership, "roles">,
): Promise<{ writes: RowWrite[]; events: NewEvent[]; checkedTokens?: string }> {
  const change: { writes: RowWrite[]; events: NewEvent[]; checkedTokens?: string } = { writes: [], events: [] };
  if (roles.length === 0) return change;
  const tokens = await deps.store.listTokensOfUser(userId);
  const issuedByOthers = tokens.filter((token) => token.issuerUserId !== null && token.issuerUserId !== userId);
  const coversRoles = new Map<string, boolean>();
  const revoked = new Set<string>();
  for (const token of issuedByOthers) {
    const issuerId = token.issuerUserId as string;
    // Stryker disable next-line ConditionalExpression: a cache; asking again gives the same answer
    if (!coversRoles.has(issuerId)) {
      const memberships = (await deps.store.listMembershipsOfUser(issuerId)).map(membershipOf);
      // Only the memberships are judged (missingForRoles reads no other field of the principal).
      // Stryker disable next-line StringLiteral: see the line above
      const issuer = { userId: issuerId, orgId: "", instanceId: "", tokenId: "", memberships };
      coversRoles.set(issuerId, missingForRoles(issuer, roles, where) === undefined);
    }
    if (coversRoles.get(issuerId)) continue;
    revoked.add(token.id);
    change.writes.push({ kind: "token.delete", id: token.id });
    change.events.push({
      aggregateType: "user",
      aggregateId: userId,
      type: EventType.personalAccessTokenRemoved,
      payload: { tokenId: token.id, reason: "issuer_below_new_role", issuerUserId: issuerId },
      resourceOwner,
    });
  }
  // What the grant leaves in place: a token issued after this read fails the grant's commit.
  change.checkedTokens = tokenFingerprint(userId, tokens.filter((token) => !revoked.has(token.id)));
  return change;
}
