import { createHmac, hkdfSync, randomBytes } from "node:crypto";
import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, failedPrecondition, invalidArgument } from "../domain/errors.js";
import { countWrongPassword, DEFAULT_LOCKOUT_POLICY } from "../domain/lockout-policy.js";
import { uniquenessKey } from "../domain/names.js";
import { judgeStoredHash } from "../domain/password-hash.js";
import { type Details, detailsOfChange } from "../events/details.js";
import type { NewEvent } from "../events/event.js";
import { EventType } from "../events/types.js";
import { spanOf } from "../queries/details.js";
import type { RowWrite } from "../store/commit.js";
import type { UserRow } from "../store/rows.js";
import { hashPassword } from "../support/password-hash.js";
import { verifyImportedHash } from "../support/password-verify/verify.js";
import { commitAs } from "./commit-as.js";

export interface VerifyPasswordInput {
  /** Exactly one of the two names the user (the request's oneof). */
  userId?: string | undefined;
  loginName?: string | undefined;
  password: string;
  /** The call's signal: a verification still waiting for a worker is dropped when the caller gives up. */
  signal?: AbortSignal | undefined;
}

/**
 * How often a check is recorded again after its conditional write lost to a concurrent one (another attempt counted,
 * a lock, a new password). Each retry reads the user afresh and verifies again only when the hash changed, so it is
 * cheap; a user whose count changes this often while one check is recorded is under a flood the caller must slow.
 */
const MAX_RECORD_TRIES = 25;

/** One answer for a wrong password, an unknown user and a user without a password: code, reason, message, metadata. */
const passwordInvalid = () => invalidArgument("password.invalid", "the user name or password is not right");

// A default argon2id of a random password nobody knows, made once per process: an unknown user and a user without a
// password are verified against it, so their answer costs what a wrong password costs.
let dummyHash: Promise<string> | undefined;
const dummy = () => (dummyHash ??= hashPassword(randomBytes(32).toString("base64url")));

/**
 * UserService.VerifyPassword (user.proto documents the rules). The permission is checked before any look-up; the
 * password is verified on the verifier pool (never on the event loop); every attempt commits one event — also for an
 * unknown user — so a wrong password, an unknown user and a user without a password cost and answer the same.
 */
export async function verifyPassword(deps: Deps, caller: Caller, input: VerifyPasswordInput): Promise<{ details: Details; passwordChangeRequired: boolean }> {
  requireInstancePermission(caller, "user.password.check");
  let verified: { hash: string; matches: boolean } | undefined;
  for (let tries = 0; tries < MAX_RECORD_TRIES; tries++) {
    const user = await findUser(deps, caller, input);
    if (!user) return refuseUnknown(deps, caller, input);
    const held = await holdOf(deps, user);
    if (held) return refuseHeld(deps, caller, user, held);
    if (user.passwordHash === null) return refuseWithoutPassword(deps, caller, user, input);
    // Verified again only when the hash changed meanwhile (a lost race): the same hash gives the same answer.
    // Stryker disable next-line ConditionalExpression,OptionalChaining: verifying the same hash again answers the same, only slower
    if (verified?.hash !== user.passwordHash) {
      verified = { hash: user.passwordHash, matches: await verifyImportedHash(user.passwordHash, input.password, input.signal, user.orgId) };
    }
    try {
      return verified.matches ? await recordRight(deps, caller, user, input.password) : await recordWrong(deps, caller, user);
    } catch (error) {
      // Lost to a concurrent change of the user (its count, lock, state or password): judge the attempt again as it is now.
      if (!(error instanceof DomainError) || error.reason !== "store.condition_failed") throw error;
    }
  }
  throw new DomainError("aborted", "password.check_contended", "the user changed too often while the password was checked; retry");
}

/** The user the request names in the caller's instance (and in the `x-service-orgid` organization, when one is named). */
async function findUser(deps: Deps, caller: Caller, input: VerifyPasswordInput): Promise<UserRow | undefined> {
  const { instanceId } = caller.principal;
  const user =
    // Stryker disable next-line StringLiteral: the request's oneof is required (validated), so without a user id there is a login name
    input.userId !== undefined ? await deps.store.findUserById(input.userId) : await deps.store.findUserByUserNameKey(instanceId, uniquenessKey((input.loginName ?? "").trim()));
  if (!user) return undefined;
  // Stryker disable next-line ConditionalExpression: a database holds one instance (instances_single), so a user of another one is never found; the check keeps the rule explicit
  if (user.instanceId !== instanceId) return undefined;
  if (caller.requestedOrgId !== undefined && user.orgId !== caller.requestedOrgId) return undefined;
  return user;
}

type Hold = "inactive" | "locked" | "organization_inactive";

/** Why a user cannot sign in whatever the password (deactivated first, as authentication orders it), if it cannot. */
async function holdOf(deps: Deps, user: UserRow): Promise<Hold | undefined> {
  if (user.inactive) return "inactive";
  if (user.locked) return "locked";
  const organization = await deps.store.findOrganizationById(user.orgId);
  // Stryker disable next-line OptionalChaining: a user's organization exists as long as the user does
  return organization?.state === "inactive" ? "organization_inactive" : undefined;
}

const userEvent = (user: UserRow, type: string, payload: Record<string, unknown>): NewEvent => ({ aggregateType: "user", aggregateId: user.id, type, payload, resourceOwner: user.orgId });

/**
 * The login name of an attempt that named no user, as a digest keyed from the master key (hex, 16 bytes): attempts at one
 * name (in any case or width, as the look-up compares names) carry the same digest and can be counted, while the name
 * cannot be read back or guessed offline from the log.
 */
function loginNameDigest(masterKey: Buffer, loginName: string): string {
  // Stryker disable next-line StringLiteral: the label only names this key's use (another label is another key, equally keyed and stable)
  const key = Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), "gatehouse sign-in login name digest", 32));
  return createHmac("sha256", key).update(uniquenessKey(loginName.trim())).digest("hex").slice(0, 32);
}

async function refuseUnknown(deps: Deps, caller: Caller, input: VerifyPasswordInput): Promise<never> {
  await verifyImportedHash(await dummy(), input.password, input.signal);
  const { instanceId } = caller.principal;
  // What the request named, for an operator looking for guessing: the id, or a keyed digest of the user name — never the
  // name itself, which is where a person who typed their password into the wrong field put it.
  // Stryker disable next-line StringLiteral: a request names a user id or a login name (a required oneof): the fallback only satisfies the type
  const named = input.userId !== undefined ? { userId: input.userId } : { loginNameDigest: loginNameDigest(deps.masterKey, input.loginName ?? "") };
  await commitAs(deps, caller, { writes: [], events: [{ aggregateType: "sign_in", aggregateId: instanceId, type: EventType.signInFailed, payload: { cause: "unknown_user", ...named }, resourceOwner: instanceId }] });
  throw passwordInvalid();
}

async function refuseWithoutPassword(deps: Deps, caller: Caller, user: UserRow, input: VerifyPasswordInput): Promise<never> {
  await verifyImportedHash(await dummy(), input.password, input.signal, user.orgId);
  // Not counted: there is no password to guess, and counting would let anyone lock a user who is still to set one.
  await commitAs(deps, caller, { writes: [], events: [userEvent(user, EventType.userPasswordCheckFailed, { cause: "no_password" })] });
  throw passwordInvalid();
}

const holdErrors: Record<Hold, () => DomainError> = {
  inactive: () => failedPrecondition("user.inactive", "the user is deactivated"),
  locked: () => failedPrecondition("user.locked", "the user is locked"),
  organization_inactive: () => failedPrecondition("organization.inactive", "the user's organization is deactivated"),
};

async function refuseHeld(deps: Deps, caller: Caller, user: UserRow, hold: Hold): Promise<never> {
  await commitAs(deps, caller, { writes: [], events: [userEvent(user, EventType.userPasswordCheckFailed, { cause: hold })] });
  throw holdErrors[hold]();
}

/**
 * A wrong password: counted (conditionally on the count read and on the hash it was judged against, so a password set
 * meanwhile is judged afresh), locking the user at the policy's limit.
 */
async function recordWrong(deps: Deps, caller: Caller, user: UserRow): Promise<never> {
  const policy = (await deps.store.getLockoutPolicy(user.instanceId)) ?? DEFAULT_LOCKOUT_POLICY;
  const { failedAttempts, lock } = countWrongPassword(policy, user.failedPasswordAttempts);
  const events = [userEvent(user, EventType.userPasswordCheckFailed, { cause: "wrong_password", failedAttempts })];
  if (lock) events.push(userEvent(user, EventType.userLocked, { cause: "password_attempts", failedAttempts }));
  await commitAs(deps, caller, { writes: [{ kind: "user.passwordFailed", id: user.id, attempts: user.failedPasswordAttempts, lock, verifiedHash: user.passwordHash! }], events });
  throw passwordInvalid();
}

/**
 * A right password: the count goes back to 0 (only while the user is still neither locked nor inactive, and the hash
 * still the one verified: an administrator's reset that landed meanwhile — say, of a leaked password — is not
 * answered with a success of the old password), and a hash that is imported or weaker than the default is replaced.
 */
async function recordRight(deps: Deps, caller: Caller, user: UserRow, password: string) {
  const stored = judgeStoredHash(user.passwordHash!);
  const writes: RowWrite[] = [{ kind: "user.passwordChecked", id: user.id, verifiedHash: user.passwordHash! }];
  const events = [userEvent(user, EventType.userPasswordChecked, {})];
  if (stored.rehash) {
    writes.push({ kind: "user.setPassword", id: user.id, passwordHash: await hashPassword(password), previousHash: user.passwordHash });
    events.push(userEvent(user, EventType.userPasswordRehashed, { fromScheme: stored.scheme, toScheme: "argon2id" }));
  }
  const span = await spanOf(deps.store, "user", user.id);
  const committed = await commitAs(deps, caller, { writes, events });
  return { details: detailsOfChange(committed, span.first), passwordChangeRequired: user.passwordChangeRequired === true };
}
