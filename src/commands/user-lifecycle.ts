import { selectManagedUser } from "../access/select-user.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, failedPrecondition, notFound } from "../domain/errors.js";
import { planStateChange, refuseSelf, type UserStateChange } from "../domain/user-state.js";
import { detailsOfChange } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import type { RowWrite } from "../store/commit.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import { LAST_OWNER_ROLE, membershipRemoval, removalTargetOf } from "./remove-member.js";
import { spanOf } from "../queries/details.js";

const stateEvents: Record<UserStateChange, string> = {
  deactivate: EventType.userDeactivated,
  reactivate: EventType.userReactivated,
  lock: EventType.userLocked,
  unlock: EventType.userUnlocked,
};


/**
 * Deactivate, reactivate, lock or unlock a user. These act on the target's identity (its tokens
 * stop or start working), so they need `user.write` and the privilege ceiling over its lifecycle (every
 * role it holds but those of a grant of another organization's project to its own: membershipsBinding); a caller may not
 * deactivate or lock itself. The flag write is conditional: of two concurrent identical calls one
 * wins and the other gets the same failed_precondition as a later call would.
 */
export async function changeUserState(deps: Deps, caller: Caller, userId: string, change: UserStateChange, request: Expected = {}) {
  const { organization, user } = await selectManagedUser(deps, caller, userId, "lifecycle");
  if (change === "deactivate" || change === "lock") refuseSelf(caller.principal.userId, user.id);
  const { flag, value } = planStateChange(user, change);
  const write: RowWrite = flag === "inactive" ? { kind: "user.setInactive", id: user.id, inactive: value } : { kind: "user.setLocked", id: user.id, locked: value };
  const span = await spanOf(deps.store, "user", user.id);
  try {
    const events = await commitAs(deps, caller, {
      expect: expectationOf("user", user.id, request),
      writes: [write],
      events: [{ aggregateType: "user", aggregateId: user.id, type: stateEvents[change], payload: {}, resourceOwner: organization.id }],
    });
    return { details: detailsOfChange(events, span.first) };
  } catch (error) {
    if (!isConditionFailed(error)) throw error;
    // Changed (or removed) concurrently: answer as the call after it would.
    const now = await deps.store.findUserById(user.id);
    if (!now) throw userNotFound(user.id);
    planStateChange(now, change);
    throw error;
  }
}

/**
 * Removes a user and everything that refers to it, in one transaction: memberships (each removal an
 * event on its member aggregate, as RemoveProjectGrantMember appends), tokens, codes, IDP links and
 * every mail queued for it (pending ones each a `notification.cancelled` event). The foreign keys
 * cascade as well, so nothing can be left dangling even by a writer that raced this one.
 */
export async function removeUser(deps: Deps, caller: Caller, userId: string, request: Expected = {}) {
  const { organization, user } = await selectManagedUser(deps, caller, userId, "lifecycle");
  refuseSelf(caller.principal.userId, user.id);
  const [span, memberships, tokens, idpLinks, mails] = await Promise.all([
    spanOf(deps.store, "user", user.id),
    deps.store.listMembershipsOfUser(user.id),
    deps.store.listTokensOfUser(user.id),
    deps.store.listIdpLinksOfUser(user.id),
    deps.store.listOutboxOfUser(user.id),
  ]);
  const writes: RowWrite[] = [
    // The instance keeps an IAM_OWNER: of two owners removing each other at once, one is refused. (Only instance
    // memberships can hold IAM_OWNER, so the guard is a no-op for the others.)
    ...memberships.map((membership) => ({ kind: "membership.delete" as const, id: membership.id, keepRoleHolder: LAST_OWNER_ROLE })),
    { kind: "token.deleteOfUser", userId: user.id },
    { kind: "code.deleteOfUser", userId: user.id },
    { kind: "userIdpLink.deleteOfUser", userId: user.id },
    { kind: "outbox.deleteOfUser", userId: user.id },
    { kind: "user.delete", id: user.id },
  ];
  const events: NewEvent[] = [
    ...memberships.map((membership) => membershipRemoval(membership, removalTargetOf(membership), EventType.userRemoved).event),
    ...mails
      .filter((mail) => mail.status === "pending")
      .map((mail): NewEvent => ({
        aggregateType: "notification",
        aggregateId: mail.id,
        type: EventType.notificationCancelled,
        payload: { template: mail.template, cause: EventType.userRemoved },
        resourceOwner: mail.instanceId,
      })),
    {
      aggregateType: "user",
      aggregateId: user.id,
      type: EventType.userRemoved,
      // Ids only: what went with the user, never a secret or an address.
      payload: {
        userName: user.userName,
        tokenIds: tokens.map((token) => token.id),
        idpLinks: idpLinks.map((link) => ({ idpId: link.idpId, externalUserId: link.externalUserId })),
        outboxIds: mails.map((mail) => mail.id),
      },
      resourceOwner: organization.id,
    },
  ];
  try {
    return { details: detailsOfChange(await commitAs(deps, caller, { writes, events, expect: expectationOf("user", user.id, request) }), span.first) };
  } catch (error) {
    if (!isConditionFailed(error)) throw error;
    if (!(await deps.store.findUserById(user.id))) throw userNotFound(user.id);
    if (memberships.some((m) => m.roles.includes(LAST_OWNER_ROLE))) {
      throw failedPrecondition("member.last_owner", `the last ${LAST_OWNER_ROLE} cannot be removed`, { role: LAST_OWNER_ROLE });
    }
    throw error;
  }
}

const userNotFound = (userId: string) => notFound("user.not_found", "the user does not exist", { userId });

function isConditionFailed(error: unknown): boolean {
  return error instanceof DomainError && error.reason === "store.condition_failed";
}
