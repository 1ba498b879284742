import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, can } from "../domain/authorization.js";
import { checkCode, MAX_CODE_ATTEMPTS } from "../domain/codes.js";
import { emailKey, normalizeEmail } from "../domain/contact.js";
import { DomainError, failedPrecondition, invalidArgument, notFound, permissionDenied } from "../domain/errors.js";
import { type Details, detailsOfChange, lastOf } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import { newOutboxRow } from "../notify/outbox.js";
import { verificationMail } from "../notify/templates.js";
import type { OrganizationRow, UserRow } from "../store/rows.js";
import type { RowWrite } from "../store/store.js";
import { commitAs } from "./commit-as.js";
import { issueCode } from "./one-time-code.js";

/** VerifyEmail's details: the attempt's event, no creation date, owned by the user's organization. */
function attemptDetails(events: Awaited<ReturnType<typeof commitAs>>): Details {
  const last = lastOf(events);
  return { sequence: last.sequence, changeDate: last.createdAt, resourceOwner: last.resourceOwner };
}

/**
 * SPEC 4.6. Allowed for the user themself or `user.write` in the user's organization. Every attempt
 * that reaches the code — right or wrong — is recorded as an event before the answer is given.
 */
export async function verifyEmail(deps: Deps, caller: Caller, input: { userId: string; verificationCode: string }) {
  const user = await deps.store.findUserById(input.userId);
  if (!user || user.instanceId !== caller.principal.instanceId) throw notFound("user.not_found", "the user does not exist", { userId: input.userId });
  if (caller.principal.userId !== user.id && !can(caller.principal, "user.write", { orgId: user.orgId })) {
    throw permissionDenied("permission.denied", "only the user or a user manager of the user's organization may verify this email", { permission: "user.write" });
  }
  if (user.type !== "human") throw failedPrecondition("user.not_human", "machine users have no email");
  const at = deps.clock.now();
  const code = await deps.store.findCode(user.id, "email");
  const failed = (outcome: string, writes: RowWrite[], error: DomainError) => recordFailure(deps, caller, user, outcome, writes, error);
  if (!code || code.usedAt !== null) {
    if (user.emailVerified) return failed("already_verified", [], failedPrecondition("email.already_verified", "the email is verified and no code is pending"));
    return failed("no_code", [], invalidArgument("email_code.invalid", "the code is not valid"));
  }
  const verdict = checkCode(deps.masterKey, code, input.verificationCode, at);
  switch (verdict) {
    case "ok": {
      const events = await claimed(deps, caller, user, () => commitAs(
        deps,
        caller,
        {
          writes: [
            { kind: "code.claimAttempt", id: code.id, max: MAX_CODE_ATTEMPTS },
            { kind: "code.use", id: code.id, at: at.getTime() },
            { kind: "user.emailVerified", id: user.id, activate: user.state === "initial" && user.passwordHash !== null },
          ],
          events: [{ aggregateType: "user", aggregateId: user.id, type: EventType.userEmailVerified, payload: { email: user.email, codeId: code.id }, resourceOwner: user.orgId }],
        },
        at,
      ));
      return { details: attemptDetails(events) };
    }
    case "invalid": {
      const attemptsLeft = String(Math.max(0, MAX_CODE_ATTEMPTS - code.attempts - 1));
      const error = invalidArgument("email_code.invalid", "the code is not valid", [], { attemptsLeft });
      return claimed(deps, caller, user, () => failed("invalid", [{ kind: "code.claimAttempt", id: code.id, max: MAX_CODE_ATTEMPTS }], error));
    }
    case "used":
      return failed("used", [], invalidArgument("email_code.invalid", "the code is not valid"));
    case "expired":
      return failed("expired", [], invalidArgument("email_code.expired", "the code has expired; request a new one"));
    case "exhausted":
      return failed("exhausted", [], failedPrecondition("email_code.exhausted", "too many wrong attempts; request a new code"));
  }
}

/**
 * Runs a commit that claims an attempt on the code. When a concurrent request used the code up or
 * made the last allowed attempt first, the claim fails and the commit is rolled back; the attempt
 * is then recorded as exhausted.
 */
async function claimed<T>(deps: Deps, caller: Caller, user: UserRow, commit: () => Promise<T>): Promise<T> {
  try {
    return await commit();
  } catch (error) {
    if (!(error instanceof DomainError) || error.reason !== "store.condition_failed") throw error;
    return recordFailure(deps, caller, user, "exhausted", [], failedPrecondition("email_code.exhausted", "too many attempts; request a new code"));
  }
}

/** Records a failed attempt as an event (with its writes), then answers with `error`. */
async function recordFailure(deps: Deps, caller: Caller, user: UserRow, outcome: string, writes: RowWrite[], error: DomainError): Promise<never> {
  await commitAs(deps, caller, {
    writes,
    events: [{ aggregateType: "user", aggregateId: user.id, type: EventType.userEmailVerificationFailed, payload: { outcome }, resourceOwner: user.orgId }],
  });
  throw error;
}

/** A human user of the selected organization that the caller may manage. */
async function manageableHuman(deps: Deps, caller: Caller, userId: string): Promise<{ organization: OrganizationRow; user: UserRow }> {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.write", { orgId: organization.id });
  const user = await deps.store.findUserById(userId);
  if (!user || user.orgId !== organization.id) throw notFound("user.not_found", "the user does not exist", { userId });
  if (user.type !== "human") throw failedPrecondition("user.not_human", "machine users have no email");
  return { organization, user };
}

/** A new email code (voiding the previous one): mailed, or returned when `returnCode`. */
async function sendEmailCode(deps: Deps, caller: Caller, organization: OrganizationRow, user: UserRow, email: string, returnCode: boolean, extra: { writes: RowWrite[]; events: NewEvent[] }) {
  const at = deps.clock.now();
  const issued = issueCode(deps, user, "email", at);
  const writes = [...extra.writes, issued.write];
  const events = [...extra.events, issued.event];
  if (!returnCode) {
    const outboxId = deps.ids.next();
    const mail = verificationMail(
      { externalUrl: deps.externalUrl, organizationName: organization.name, organizationId: organization.id, userId: user.id, userName: user.userName, displayName: user.displayName ?? user.userName },
      issued.code,
    );
    writes.push({ kind: "outbox.insert", row: newOutboxRow(deps.masterKey, { id: outboxId, instanceId: user.instanceId, template: "user.verification", recipient: email, mail, at }) });
    events.push({ aggregateType: "user", aggregateId: user.id, type: EventType.userNotificationQueued, payload: { template: "user.verification", outboxId }, resourceOwner: user.orgId });
  }
  const committed = await commitAs(deps, caller, { writes, events }, at);
  return { committed, ...(returnCode ? { verificationCode: issued.code } : {}) };
}

export async function setEmail(deps: Deps, caller: Caller, input: { userId: string; email: string; isVerified: boolean; returnCode: boolean }) {
  const { organization, user } = await manageableHuman(deps, caller, input.userId);
  const email = normalizeEmail(input.email, "email");
  const span = await deps.store.aggregateSpan("user", user.id);
  const change = {
    writes: [{ kind: "user.emailChange" as const, id: user.id, email, emailKey: emailKey(email), verified: input.isVerified }],
    events: [{ aggregateType: "user" as const, aggregateId: user.id, type: EventType.userEmailChanged, payload: { email, verified: input.isVerified }, resourceOwner: user.orgId }],
  };
  if (input.isVerified) {
    // A pending code must not verify the new address later.
    const committed = await commitAs(deps, caller, { writes: [...change.writes, { kind: "code.void", userId: user.id, codeKind: "email" }], events: change.events });
    return { details: detailsOfChange(committed, span?.first) };
  }
  const { committed, verificationCode } = await sendEmailCode(deps, caller, organization, user, email, input.returnCode, change);
  return { details: detailsOfChange(committed, span?.first), verificationCode };
}

export async function resendEmailCode(deps: Deps, caller: Caller, input: { userId: string; returnCode: boolean }) {
  const { organization, user } = await manageableHuman(deps, caller, input.userId);
  if (user.emailVerified) throw failedPrecondition("email.already_verified", "the email is verified already");
  const span = await deps.store.aggregateSpan("user", user.id);
  const { committed, verificationCode } = await sendEmailCode(deps, caller, organization, user, user.email ?? "", input.returnCode, { writes: [], events: [] });
  return { details: detailsOfChange(committed, span?.first), verificationCode };
}
