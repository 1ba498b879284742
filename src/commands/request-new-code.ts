import type { LinkHolder } from "../access/link-holder.js";
import type { Deps } from "../context.js";
import { DomainError, failedPrecondition, notFound } from "../domain/errors.js";
import { checkNewCodeAllowed, NEW_CODE_COOLDOWN_MS } from "../domain/new-code-limit.js";
import { requireMaySignIn } from "../domain/user-state.js";
import { EventType } from "../events/types.js";
import { newOutboxRow } from "../notify/outbox.js";
import { initializationMail, verificationMail } from "../notify/templates.js";
import { spanOf } from "../queries/details.js";
import { pendingCode } from "../queries/pending-code.js";
import { commitAs } from "./commit-as.js";
import { issueCode } from "./one-time-code.js";

/** The codes a hosted page can ask a new one of: the email code (verification page) and the init code (init page). */
export type NewCodeKind = "email" | "init";

/** The outbox templates of mails that carry a code: what the per-user limit counts. */
const CODE_MAIL_TEMPLATES = new Set(["user.initialization", "user.verification"]);
const TEMPLATE: Record<NewCodeKind, string> = { email: "user.verification", init: "user.initialization" };

/**
 * "Send me a new code", from a hosted page whose code expired, was used up or was entered wrong too often. The new
 * code replaces the old one and goes only by mail, to the user's address; the page never shows it.
 *
 * Refused (failed_precondition) when there is nothing to do: `email.already_verified`, `user.already_initialized` (the
 * user has a password), `code.still_valid` (the code mailed last still works: a new one would only void it), or
 * `init_code.none` (the user was never invited to set a password). Limited
 * per user (domain/new-code-limit.ts) by the code mails already queued to the user, which every replica reads from the
 * one database; of two requests racing past the check, the commit's expectation on the user lets one through.
 */
export async function requestNewCode(deps: Deps, holder: LinkHolder, kind: NewCodeKind): Promise<void> {
  const { organization, caller } = holder;
  // Read first: the commit expects the user's sequence as it was before the user, the code and the mails below were
  // read, so a code mailed (or tried), or an address changed, after any of those reads makes this request lose the race
  // instead of mailing a second code, or one to an address the user no longer has.
  const span = await spanOf(deps.store, "user", holder.user.id);
  const user = await deps.store.findUserById(holder.user.id);
  // Stryker disable next-line StringLiteral: the pages answer by the reason alone (link.invalid), never with the message
  if (!user) throw notFound("link.invalid", "the link does not name a user that can use it");
  requireMaySignIn(user);
  if (kind === "email" && user.emailVerified) throw failedPrecondition("email.already_verified", "the email is verified already");
  if (kind === "init" && user.passwordHash !== null) throw failedPrecondition("user.already_initialized", "the user has a password already");
  const current = await pendingCode(deps, user.id, kind);
  if (current.state === "usable") throw failedPrecondition("code.still_valid", "the code mailed last can still be used");
  // Only a user who was invited to set a password may have a new invitation: one created with an IDP link signs in
  // there, and a link holder must not be able to give it a password of its own.
  // Stryker disable next-line StringLiteral: the init page answers this reason as an invalid link (init-page.ts), never with the message
  if (kind === "init" && current.state === "none") throw failedPrecondition("init_code.none", "the user was never sent a code to set a password");
  const at = deps.clock.now();
  const mails = await deps.store.listOutboxOfUser(user.id);
  // Stryker disable next-line MethodExpression: every mail queued today is a code mail (the two templates); the filter keeps the limit to codes once another kind exists
  checkNewCodeAllowed(mails.filter((mail) => CODE_MAIL_TEMPLATES.has(mail.template)).map((mail) => mail.createdAt), at.getTime());

  // An init code records the address it goes to: a right one proves that address too (initialize-user.ts).
  // Stryker disable next-line ConditionalExpression: only an init code's address is read (initialize-user.ts); an email code is checked against the user's address of the moment
  const issued = issueCode(deps, user, kind, at, kind === "init" ? user.emailKey : null);
  const context = { externalUrl: deps.externalUrl, organizationName: organization.name, organizationId: organization.id, userId: user.id, userName: user.userName, displayName: user.displayName ?? user.userName };
  const mail = kind === "email" ? verificationMail(context, issued.code) : initializationMail(context, { initCode: issued.code });
  const outboxId = deps.ids.next();
  const template = TEMPLATE[kind];
  try {
    await commitAs(
      deps,
      caller,
      {
        writes: [
          issued.write,
          // Stryker disable next-line StringLiteral: a human user always has an email (CreateHumanUser and SetEmail require one)
          { kind: "outbox.insert", row: newOutboxRow(deps.masterKey, { id: outboxId, instanceId: user.instanceId, userId: user.id, template, recipient: user.email ?? "", mail, at }) },
        ],
        events: [
          issued.event,
          { aggregateType: "user", aggregateId: user.id, type: EventType.userNotificationQueued, payload: { template, outboxId }, resourceOwner: user.orgId },
        ],
        expect: { aggregateType: "user", aggregateId: user.id, sequence: span.last.sequence },
      },
      at,
    );
  } catch (error) {
    // Another request for this user committed first (most likely a second press of the button): that one's mail is
    // the new code, and this one is as if it came right after it.
    if (error instanceof DomainError && error.reason === "concurrent_modification") {
      throw new DomainError("resource_exhausted", "code.resend_limited", "a new code was sent a moment ago", { retryAfterSeconds: String(NEW_CODE_COOLDOWN_MS / 1000) });
    }
    throw error;
  }
}
