import type { Deps } from "../context.js";
import { failedPrecondition, invalidArgument } from "../domain/errors.js";
import { checkPasswordPolicy, DEFAULT_PASSWORD_POLICY, type PasswordPolicy } from "../domain/password-policy.js";
import { type Details, lastOf } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import type { RowWrite } from "../store/commit.js";
import type { OneTimeCodeRow, UserRow } from "../store/rows.js";
import { hashPassword } from "../support/password-hash.js";
import { attemptCode } from "./code-attempt.js";

export interface InitializeUserInput {
  userId: string;
  /** The init code of the initialization mail (case-insensitive, surrounding blanks ignored). */
  code: string;
  /** The first password, checked against the instance's password policy. */
  password: string;
}

/** The instance's password policy (the database holds one instance), or the default while none is stored. */
async function instancePasswordPolicy(deps: Deps): Promise<PasswordPolicy> {
  const instance = await deps.store.getInstance();
  if (!instance) return DEFAULT_PASSWORD_POLICY;
  return (await deps.store.getPasswordPolicy(instance.id)) ?? DEFAULT_PASSWORD_POLICY;
}

const initCodeInvalid = () => invalidArgument("init_code.invalid", "the code is not valid");

/**
 * The hosted "initialize account" page's write: the user sets a first password with the init code of the
 * initialization mail. There is no caller: the code is the credential, and the actor recorded is the user.
 *
 * The code follows VerifyEmail's rules through the same code (attemptCode): five attempts, expiry (72 h), single use;
 * answers `init_code.invalid` (with `attemptsLeft` after a wrong code), `init_code.expired`, `init_code.exhausted`. An
 * unknown user, a machine user, a user without a pending init code and a used code all answer `init_code.invalid`
 * like a wrong code, so the page reveals nothing to someone without the code. The password policy is checked first,
 * for every request alike (`password.policy` with one field violation per broken rule on `password`), so a password
 * the policy refuses never spends an attempt. Hashing (argon2id, off the event loop) happens only for a right code.
 *
 * A right code, in one commit: uses the code, sets the password (no change required: the user chose it), verifies
 * the email when it is unverified and still the address the initialization mail went to (the mail proved it; the
 * pending email code is voided), and makes the user ACTIVE once its email is verified. A deactivated or locked user
 * (failed_precondition `user.inactive` / `user.locked`) is told so only with a right code, which stays unspent.
 */
export async function initializeUserWithCode(deps: Deps, input: InitializeUserInput): Promise<{ details: Details }> {
  checkPasswordPolicy(await instancePasswordPolicy(deps), input.password);
  const user = await deps.store.findUserById(input.userId);
  const code = user?.type === "human" ? await deps.store.findCode(user.id, "init") : undefined;
  // (A used code is answered init_code.invalid by attemptCode too: without `code.usedAt !== null` here the answer is the
  // same, so that term's `false` mutant is equivalent.)
  if (!user || !code || code.usedAt !== null) throw initCodeInvalid();
  const at = deps.clock.now();
  const events = await attemptCode(deps, {
    code,
    candidate: input.code,
    at,
    reasons: "init_code",
    commit: (change) => deps.store.commit({ instanceId: user.instanceId, actor: user.id, at, ...change }),
    onRight: async () => {
      if (user.inactive) throw failedPrecondition("user.inactive", "the user is deactivated");
      if (user.locked) throw failedPrecondition("user.locked", "the user is locked");
      return initialization(user, code, await hashPassword(input.password));
    },
    wrongEvent: { aggregateType: "user", aggregateId: user.id, type: EventType.userInitializationFailed, payload: { outcome: "invalid", codeId: code.id }, resourceOwner: user.orgId },
  });
  const last = lastOf(events);
  return { details: { sequence: last.sequence, changeDate: last.createdAt, resourceOwner: last.resourceOwner } };
}

/** The writes and events of a right init code, besides using it. */
function initialization(user: UserRow, code: OneTimeCodeRow, passwordHash: string): { writes: RowWrite[]; events: NewEvent[] } {
  // The init code proves the address it was mailed to, and only while that is still the user's.
  // Stryker disable next-line ConditionalExpression,LogicalOperator: a human user always has an email key, so a null emailKey never equals it; the check keeps "not mailed" from ever proving an address
  const mailedHere = code.emailKey !== null && code.emailKey === user.emailKey;
  const verifyEmail = user.emailVerified !== true && mailedHere;
  // (Every init code goes to the user's address and an address change voids it, so a right code always leaves a verified
  // email: the `true` mutant is equivalent; the rule keeps an unproven address from activating.)
  const activate = user.emailVerified === true || verifyEmail;
  const writes: RowWrite[] = [
    // Conditional on the stored hash being the one read (none, for an invited user), so a password set meanwhile — by an
    // admin, an import or another use of the code — is never overwritten.
    { kind: "user.setPassword", id: user.id, passwordHash, changeRequired: false, activate, previousHash: user.passwordHash },
  ];
  const event = (type: string, payload: Record<string, unknown>): NewEvent => ({ aggregateType: "user", aggregateId: user.id, type, payload, resourceOwner: user.orgId });
  const state = activate
    ? "active"
    : // Stryker disable next-line StringLiteral: cannot happen (see activate)
      "initial";
  const events: NewEvent[] = [event(EventType.userInitialized, { codeId: code.id, passwordChangeRequired: false, emailVerified: verifyEmail, state })];
  if (verifyEmail) {
    writes.push({ kind: "user.emailVerified", id: user.id, activate }, { kind: "code.void", userId: user.id, codeKind: "email" });
    events.push(event(EventType.userEmailVerified, { email: user.email, codeId: code.id }));
  }
  return { writes, events };
}
