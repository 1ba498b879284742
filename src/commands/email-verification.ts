import { type SelectedUser, selectManagedUser, selectUserToManage } from "../access/select-user.js";
import type { Caller, Deps } from "../context.js";
import { can, canInstanceWide } from "../domain/authorization.js";
import { emailKey, normalizeEmail } from "../domain/contact.js";
import { failedPrecondition, invalidArgument, notFound, permissionDenied } from "../domain/errors.js";
import { type Details, detailsOfChange, lastOf } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import { newOutboxRow } from "../notify/outbox.js";
import { initializationMail, verificationMail } from "../notify/templates.js";
import type { OrganizationRow, UserRow } from "../store/rows.js";
import type { Expectation, RowWrite } from "../store/commit.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import { attemptCode } from "./code-attempt.js";
import { issueCode } from "./one-time-code.js";
import { spanOf } from "../queries/details.js";

/** VerifyEmail's details: the attempt's event, no creation date, owned by the user's organization. */
function attemptDetails(events: Awaited<ReturnType<typeof commitAs>>): Details {
  const last = lastOf(events);
  return { sequence: last.sequence, changeDate: last.createdAt, resourceOwner: last.resourceOwner };
}

/**
 * SPEC 4.6. Allowed for the user themself or `user.write` in the user's organization. Every attempt
 * against a pending code — right or wrong — is recorded as an event before the answer is given; at
 * most five can be (each claims one of the code's attempts), so the audit log cannot be grown without
 * bound by a caller without write permission. Attempts without a pending code append nothing.
 */
export async function verifyEmail(deps: Deps, caller: Caller, input: { userId: string; verificationCode: string }) {
  const user = await verifiableUser(deps, caller, input.userId);
  if (user.type !== "human") throw failedPrecondition("user.not_human", "machine users have no email");
  const at = deps.clock.now();
  const code = await deps.store.findCode(user.id, "email");
  if (!code || code.usedAt !== null) {
    if (user.emailVerified) throw failedPrecondition("email.already_verified", "the email is verified and no code is pending");
    throw invalidArgument("email_code.invalid", "the code is not valid");
  }
  const events = await attemptCode(deps, {
    code,
    candidate: input.verificationCode,
    at,
    reasons: "email_code",
    commit: (change) => commitAs(deps, caller, change, at),
    onRight: async () => {
      // A user with a way to sign in (a password, an imported hash or a passwordless registration) was INITIAL only
      // for its unverified email, so the verified user is ACTIVE, as if created with it (an ACTIVE one stays so).
      const activate = user.passwordHash !== null || (await deps.store.findCode(user.id, "passwordless")) !== undefined;
      return {
        writes: [{ kind: "user.emailVerified", id: user.id, activate }],
        events: [{ aggregateType: "user", aggregateId: user.id, type: EventType.userEmailVerified, payload: { email: user.email, codeId: code.id }, resourceOwner: user.orgId }],
      };
    },
    wrongEvent: { aggregateType: "user", aggregateId: user.id, type: EventType.userEmailVerificationFailed, payload: { outcome: "invalid", codeId: code.id }, resourceOwner: user.orgId },
  });
  return { details: attemptDetails(events) };
}

/**
 * The user a VerifyEmail caller may act on. Existence is not revealed: a user the caller has no right
 * on and an unknown id both answer permission_denied. Only a caller who may manage users in every
 * organization (instance-wide `user.write`) learns not_found, as it could see the user anyway.
 */
async function verifiableUser(deps: Deps, caller: Caller, userId: string): Promise<UserRow> {
  const { principal } = caller;
  const user = await deps.store.findUserById(userId);
  if (user && user.instanceId === principal.instanceId && (principal.userId === user.id || can(principal, "user.write", { orgId: user.orgId }))) {
    return user;
  }
  if (canInstanceWide(principal, "user.write")) throw notFound("user.not_found", "the user does not exist", { userId });
  throw permissionDenied("permission.denied", "only the user or a user manager of the user's organization may verify this email", { permission: "user.write" });
}

/**
 * A human user of the selected organization that the caller may manage. With `ceiling` (the call
 * sets or hands out the user's email credentials) the caller must also hold everything the user holds.
 */
async function manageableHuman(deps: Deps, caller: Caller, userId: string, ceiling: boolean): Promise<SelectedUser> {
  const selected = ceiling ? await selectManagedUser(deps, caller, userId) : await selectUserToManage(deps, caller, userId);
  if (selected.user.type !== "human") throw failedPrecondition("user.not_human", "machine users have no email");
  return selected;
}

/** What a mail to `user` is written with. */
const mailContextOf = (deps: Deps, organization: OrganizationRow, user: UserRow) => ({
  externalUrl: deps.externalUrl,
  organizationName: organization.name,
  organizationId: organization.id,
  userId: user.id,
  userName: user.userName,
  displayName: user.displayName ?? user.userName,
});

/** The writes and event that queue `mail` (template `template`) to `email`. */
function queuedMail(deps: Deps, user: UserRow, template: string, email: string, mail: ReturnType<typeof verificationMail>, at: Date) {
  const outboxId = deps.ids.next();
  return {
    write: { kind: "outbox.insert", row: newOutboxRow(deps.masterKey, { id: outboxId, instanceId: user.instanceId, userId: user.id, template, recipient: email, mail, at }) } satisfies RowWrite,
    event: { aggregateType: "user", aggregateId: user.id, type: EventType.userNotificationQueued, payload: { template, outboxId }, resourceOwner: user.orgId } satisfies NewEvent,
  };
}

/**
 * A new email code (voiding the previous one): mailed, or returned when `returnCode`. With `reinvite` (the address
 * changed while the user's set-password invitation was pending) a new init code goes with it to the new address, in an
 * initialization mail: the invitation follows the address.
 */
async function sendEmailCode(
  deps: Deps,
  caller: Caller,
  organization: OrganizationRow,
  user: UserRow,
  email: string,
  returnCode: boolean,
  extra: { writes: RowWrite[]; events: NewEvent[]; expect?: Expectation | undefined },
  reinvite = false,
) {
  const at = deps.clock.now();
  const issued = issueCode(deps, user, "email", at);
  const writes = [...extra.writes, issued.write];
  const events = [...extra.events, issued.event];
  if (!returnCode) {
    const context = mailContextOf(deps, organization, user);
    const invitation = reinvite ? issueCode(deps, user, "init", at, emailKey(email)) : undefined;
    const queued = invitation
      ? queuedMail(deps, user, "user.initialization", email, initializationMail(context, { emailCode: issued.code, initCode: invitation.code }), at)
      : queuedMail(deps, user, "user.verification", email, verificationMail(context, issued.code), at);
    if (invitation) writes.push(invitation.write), events.push(invitation.event);
    writes.push(queued.write);
    events.push(queued.event);
  }
  const committed = await commitAs(deps, caller, { writes, events, expect: extra.expect }, at);
  return { committed, ...(returnCode ? { verificationCode: issued.code } : {}) };
}

export async function setEmail(deps: Deps, caller: Caller, input: { userId: string; email: string; isVerified: boolean; returnCode: boolean } & Expected) {
  const { organization, user } = await manageableHuman(deps, caller, input.userId, true);
  const email = normalizeEmail(input.email, "email");
  const span = await spanOf(deps.store, "user", user.id);
  // A set-password invitation still pending went to the old address: its link must not outlive the change (whoever
  // reads that mailbox could set the first password). It is voided, and re-sent to the new address with a new init
  // code unless the caller takes the codes itself (`returnCode`).
  const invitation = await deps.store.findCode(user.id, "init");
  const invited = invitation !== undefined && invitation.usedAt === null;
  const change: { writes: RowWrite[]; events: NewEvent[]; expect?: Expectation | undefined } = {
    writes: [
      { kind: "user.emailChange", id: user.id, email, emailKey: emailKey(email), verified: input.isVerified },
      ...(invited ? [{ kind: "code.void" as const, userId: user.id, codeKind: "init" as const }] : []),
    ],
    events: [{ aggregateType: "user", aggregateId: user.id, type: EventType.userEmailChanged, payload: { email, verified: input.isVerified }, resourceOwner: user.orgId }],
    expect: expectationOf("user", user.id, input),
  };
  if (input.isVerified) {
    // A pending code must not verify the new address later.
    change.writes.push({ kind: "code.void", userId: user.id, codeKind: "email" });
    if (invited && !input.returnCode) {
      const at = deps.clock.now();
      const reissued = issueCode(deps, user, "init", at, emailKey(email));
      const queued = queuedMail(deps, user, "user.initialization", email, initializationMail(mailContextOf(deps, organization, user), { initCode: reissued.code }), at);
      change.writes.push(reissued.write, queued.write);
      change.events.push(reissued.event, queued.event);
    }
    const committed = await commitAs(deps, caller, change);
    return { details: detailsOfChange(committed, span.first) };
  }
  const { committed, verificationCode } = await sendEmailCode(deps, caller, organization, user, email, input.returnCode, change, invited);
  return { details: detailsOfChange(committed, span.first), verificationCode };
}

export async function resendEmailCode(deps: Deps, caller: Caller, input: { userId: string; returnCode: boolean }) {
  const { organization, user } = await manageableHuman(deps, caller, input.userId, input.returnCode);
  if (user.emailVerified) throw failedPrecondition("email.already_verified", "the email is verified already");
  const span = await spanOf(deps.store, "user", user.id);
  // Stryker disable next-line StringLiteral: a human user always has an email (CreateHumanUser and SetEmail require one); the fallback only satisfies the type
  const { committed, verificationCode } = await sendEmailCode(deps, caller, organization, user, user.email ?? "", input.returnCode, { writes: [], events: [] });
  return { details: detailsOfChange(committed, span.first), verificationCode };
}
