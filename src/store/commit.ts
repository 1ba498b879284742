import { DomainError } from "../domain/errors.js";
import type { NewEvent } from "../events/event.js";
import type {
  ApplicationRow,
  IdentityProviderRow,
  InstanceRow,
  LockoutPolicyRow,
  MembershipRow,
  NewOneTimeCodeRow,
  NewUserRow,
  OneTimeCodeRow,
  OrganizationRow,
  OutboxRow,
  PasswordPolicyRow,
  SmtpConfigRow,
  ProjectGrantRow,
  ProjectRoleRow,
  ProjectRow,
  TokenRow,
  UserIdpLinkRow,
  UserRow,
} from "./rows.js";

/** What a re-import (ImportHumanUsers with ON_CONFLICT_UPDATE) sets on an existing human user, besides its password. */
export type ImportedUserFields = Pick<
  UserRow,
  "firstName" | "lastName" | "nickName" | "displayName" | "preferredLanguage" | "gender" | "email" | "emailKey" | "emailVerified" | "phone" | "phoneVerified"
>;

/**
 * One state change of a commit. Commands describe WHAT to write; the backend decides how, inside
 * one transaction together with the events. New aggregates add their variants here.
 */
export type RowWrite =
  | { kind: "instance.insert"; row: InstanceRow }
  | { kind: "organization.insert"; row: OrganizationRow }
  /** Conditional: fails the commit (`store.condition_failed`) unless the organization exists and its state changes. */
  | { kind: "organization.setState"; id: string; state: OrganizationRow["state"] }
  | { kind: "user.insert"; row: NewUserRow }
  | { kind: "user.emailChange"; id: string; email: string; emailKey: string; verified: boolean }
  | { kind: "user.emailVerified"; id: string; activate: boolean }
  /**
   * A re-import sets a human user's profile, email and phone (`fields`); with `passwordHash`, the password hash too
   * (and the count of wrong passwords back to 0); with `externalId`, the external id; `activate` makes an INITIAL user
   * ACTIVE. Conditional: fails the commit (`store.condition_failed`) unless the human user is still there, and, with
   * `checkedMemberships`, unless its memberships are still those the privilege ceiling was checked against.
   */
  | { kind: "user.importUpdate"; id: string; fields: ImportedUserFields; passwordHash?: string; externalId?: string; activate: boolean; checkedMemberships?: string }
  /** Conditional: fails the commit (`store.condition_failed`) unless the flag changes, so of two concurrent calls one wins. */
  | { kind: "user.setInactive"; id: string; inactive: boolean }
  /** Conditional, like `user.setInactive`. Unlocking also resets the count of wrong passwords (a fresh start). */
  | { kind: "user.setLocked"; id: string; locked: boolean }
  /**
   * Sets the password hash and resets the count of wrong passwords; `changeRequired` undefined keeps the flag; `activate`
   * makes an INITIAL user ACTIVE. With `previousHash` (null: none), conditional: fails the commit (`store.condition_failed`)
   * unless the stored hash is still that one, so a rehash never overwrites a password set concurrently. With
   * `checkedMemberships`, conditional like `token.insert`'s: the privilege ceiling's check must still hold.
   */
  | { kind: "user.setPassword"; id: string; passwordHash: string; changeRequired?: boolean; activate?: boolean; previousHash?: string | null; checkedMemberships?: string }
  /**
   * A right password: the count of wrong ones goes back to 0. Conditional: fails the commit unless the user is still
   * neither locked nor inactive, so a check that raced a lock (or a deactivation) does not succeed after it; with
   * `verifiedHash`, also unless the stored hash is still the one the password was verified against, so the old
   * password does not succeed after a reset (SetPassword) that landed meanwhile.
   */
  | { kind: "user.passwordChecked"; id: string; verifiedHash?: string }
  /**
   * A wrong password: the count becomes `attempts + 1`, and with `lock` the user is locked too. Conditional: fails the
   * commit unless the count is still `attempts` and the user is not locked, so concurrent wrong passwords count one by
   * one (each commit sees the last) and the count never passes the lockout limit. With `verifiedHash`, also unless the
   * stored hash is still the one the password was judged wrong against: a password set meanwhile is judged afresh.
   */
  | { kind: "user.passwordFailed"; id: string; attempts: number; lock: boolean; verifiedHash?: string }
  /**
   * Conditional: fails the commit when the user is gone, or still has a membership (one added since
   * the remover read them would otherwise vanish by cascade without its event).
   */
  | { kind: "user.delete"; id: string }
  | { kind: "token.deleteOfUser"; userId: string }
  | { kind: "code.deleteOfUser"; userId: string }
  | { kind: "userIdpLink.deleteOfUser"; userId: string }
  | { kind: "outbox.deleteOfUser"; userId: string }
  | { kind: "userIdpLink.insert"; row: UserIdpLinkRow }
  | { kind: "code.replace"; row: NewOneTimeCodeRow }
  | { kind: "code.void"; userId: string; codeKind: OneTimeCodeRow["kind"] }
  /**
   * Counts one attempt on a code, atomically: only while it is unused and has fewer than `max`
   * attempts. When it has not, the whole commit fails with `store.condition_failed`, so concurrent
   * requests can never make more attempts than allowed.
   */
  | { kind: "code.claimAttempt"; id: string; max: number }
  | { kind: "code.use"; id: string; at: number }
  | { kind: "outbox.insert"; row: OutboxRow }
  | { kind: "passwordPolicy.insert"; row: PasswordPolicyRow }
  /** Inserts the instance's lockout policy, or replaces it. */
  | { kind: "lockoutPolicy.put"; row: LockoutPolicyRow }
  | { kind: "smtp.insert"; row: SmtpConfigRow }
  | { kind: "smtp.update"; instanceId: string; settings: Omit<SmtpConfigRow, "instanceId" | "passwordSealed">; dropPassword: boolean }
  | { kind: "smtp.setPassword"; instanceId: string; passwordSealed: string }
  | { kind: "smtp.delete"; instanceId: string }
  /**
   * With `owner` (the delivery worker always gives it), conditional: fails the commit (`store.condition_failed`) unless
   * the message is still pending and claimed by `owner` (`claimDueOutbox`): a worker whose lease another one took over
   * must not record the other's delivery. Without it (seeding, tests), unconditional.
   */
  | { kind: "outbox.sent"; id: string; attempts: number; owner?: string }
  /** Conditional like `outbox.sent`; it also ends the claim, so whichever worker finds it due next may claim it. */
  | { kind: "outbox.retry"; id: string; attempts: number; nextAttemptAt: number; owner?: string }
  /** Conditional like `outbox.sent`. */
  | { kind: "outbox.failed"; id: string; attempts: number; owner?: string }
  /** The message was copied to the mail dir (no SMTP configuration): it stays pending, parked, and its claim ends. */
  | { kind: "outbox.copied"; id: string; at: number }
  /**
   * With `checkedMemberships`, conditional: the commit fails (`store.condition_failed`) unless the
   * user's memberships are still exactly those the privilege ceiling was checked against
   * (`membershipFingerprint`), so a role granted meanwhile cannot slip under an issued token.
   */
  | { kind: "token.insert"; row: TokenRow; checkedMemberships?: string }
  /** Conditional: a token removed concurrently fails the commit (`store.condition_failed`). */
  | { kind: "token.delete"; id: string }
  /**
   * With `checkedTokens`, conditional: the commit fails unless the user's tokens issued by others are
   * exactly those the grant considered (`tokenFingerprint`, after this commit's revocations), so a
   * token issued meanwhile cannot keep the new role.
   */
  | { kind: "membership.insert"; row: MembershipRow; checkedTokens?: string }
  /**
   * Conditional: fails the commit when the membership is gone; with `keepRoleHolder`, also when no other
   * membership of its scope holds that role (the instance never loses its last IAM_OWNER, even to two
   * concurrent removals).
   */
  | { kind: "membership.delete"; id: string; keepRoleHolder?: string }
  | { kind: "project.insert"; row: ProjectRow }
  | { kind: "projectRole.insert"; row: ProjectRoleRow }
  | { kind: "projectGrant.insert"; row: ProjectGrantRow }
  | { kind: "project.rename"; id: string; name: string; nameKey: string }
  /** Conditional: fails the commit (`store.condition_failed`) unless the project exists and its state changes. */
  | { kind: "project.setState"; id: string; state: ProjectRow["state"] }
  /**
   * Conditional: fails the commit when the project is gone, or anything still refers to it (a role,
   * grant, membership or application added since the remover read them would otherwise dangle).
   */
  | { kind: "project.delete"; id: string }
  /** Conditional: fails the commit when the role is gone. */
  | { kind: "projectRole.delete"; projectId: string; roleKey: string }
  /** Conditional: fails the commit when the grant is gone. */
  | { kind: "projectGrant.setRoleKeys"; id: string; roleKeys: string[] }
  /** Conditional: fails the commit when the grant is gone, or still has a member (added since the remover read them). */
  | { kind: "projectGrant.delete"; id: string }
  | { kind: "application.insert"; row: ApplicationRow }
  | { kind: "application.rename"; id: string; name: string; nameKey: string }
  /** Conditional: fails the commit (`store.condition_failed`) unless the application exists and its state changes. */
  | { kind: "application.setState"; id: string; state: ApplicationRow["state"] }
  /** Conditional: only while the stored hash is still `previousHash`, so of two concurrent regenerations one wins. */
  | { kind: "application.replaceSecretHash"; id: string; previousHash: string | null; hash: string }
  /** Conditional: fails the commit when the application is gone. */
  | { kind: "application.delete"; id: string }
  | { kind: "identityProvider.insert"; row: IdentityProviderRow }
  | { kind: "identityProvider.replace"; id: string; fields: Pick<IdentityProviderRow, "name" | "nameKey" | "stylingType" | "autoRegister"> }
  /** Conditional: fails the commit when the link is gone (its user removed concurrently). */
  | { kind: "userIdpLink.delete"; idpId: string; externalUserId: string }
  /**
   * Conditional: fails the commit when the IDP is gone, or a user still links to it (a link added
   * since the remover read them would otherwise be left dangling, without its event).
   */
  | { kind: "identityProvider.delete"; id: string };

/** The columns a `user.importUpdate` sets (the same on every engine). */
export function importedUserSet(write: Extract<RowWrite, { kind: "user.importUpdate" }>) {
  return {
    ...write.fields,
    ...(write.passwordHash !== undefined ? { passwordHash: write.passwordHash, failedPasswordAttempts: 0 } : {}),
    ...(write.externalId !== undefined ? { externalId: write.externalId } : {}),
    ...(write.activate ? { state: "active" as const } : {}),
  };
}

/**
 * Optimistic concurrency: the sequence of the aggregate's last event that the caller last read (its details.sequence).
 * Checked inside the commit's transaction, before any write, serialized with every other commit.
 */
export interface Expectation {
  aggregateType: string;
  aggregateId: string;
  sequence: number;
}

/** Everything one intent writes: applied atomically, or not at all. */
export interface Commit {
  instanceId: string;
  actor: string;
  at: Date;
  writes: RowWrite[];
  events: NewEvent[];
  /** When set, the commit fails with `concurrentModification` (and writes nothing) unless the aggregate's last event is still at `sequence`. */
  expect?: Expectation | undefined;
}

/**
 * A stale expectation: aborted, reason `concurrent_modification`, metadata `current_sequence` = the sequence of the
 * aggregate's last event now ("0" when it has none). A removed aggregate keeps its events, so its removal's sequence.
 */
export function concurrentModification(expectation: Expectation, current: number): DomainError {
  return new DomainError(
    "aborted",
    "concurrent_modification",
    `the ${expectation.aggregateType} changed since sequence ${expectation.sequence} was read (it is at ${current} now); read it again`,
    { current_sequence: String(current) },
  );
}

/** Throws `concurrentModification` unless the aggregate's last event (`current`, 0: none) is the expected one. */
export function checkExpectation(expectation: Expectation, current: number): void {
  if (expectation.sequence !== current) throw concurrentModification(expectation, current);
}

/**
 * Writes no cached principal depends on: a new user, organization or token (no principal was built from it yet), and a
 * user's password hash and its count of wrong passwords (authentication by token never reads them). Sign-ins write
 * these on every VerifyPassword; dropping every replica's principal cache for each would cost every other call.
 */
const ACCESS_NEUTRAL = new Set<RowWrite["kind"]>(["user.insert", "organization.insert", "token.insert", "user.setPassword", "user.passwordChecked"]);

/**
 * Whether a commit may change what an existing principal is made of (its token, its user's flags, its organization's
 * state, its memberships): caches of principals must then be dropped (`Store.accessVersion`). By prefix, so a new
 * kind of write on these rows invalidates by default.
 */
export function changesAccess(commit: Commit): boolean {
  return commit.writes.some(writeChangesAccess);
}

function writeChangesAccess(write: RowWrite): boolean {
  // A wrong password changes the principal only when it locks the user. (Without its `^` the pattern matches the same
  // kinds: no kind has "user.", "token.", "membership." or "organization." after its start.)
  // Stryker disable next-line Regex: as above
  return write.kind === "user.passwordFailed" ? write.lock : !ACCESS_NEUTRAL.has(write.kind) && /^(user|token|membership|organization)\./.test(write.kind);
}

/**
 * The user whose principal alone an access-changing write may change, or undefined when it may change anyone's: a
 * principal is its token, its user and its user's organization and memberships, so a write on one user's row, their
 * tokens as a whole or a new membership of theirs changes that user's principal only. An organization's state, a
 * removed membership or token (the write names no user) and every other kind may change anyone's.
 */
function userOfAccessWrite(write: RowWrite): string | undefined {
  if (write.kind === "membership.insert") return write.row.userId;
  if (write.kind === "token.deleteOfUser") return write.userId;
  if (USER_ROW_WRITES.has(write.kind)) return (write as { id: string }).id;
  return undefined;
}
/** The writes on one user's row, named by its `id`. Listed, so that a new kind may change anyone's principal by default. */
const USER_ROW_WRITES = new Set<RowWrite["kind"]>([
  "user.emailChange",
  "user.emailVerified",
  "user.importUpdate",
  "user.setInactive",
  "user.setLocked",
  "user.setPassword",
  "user.passwordFailed",
  "user.delete",
]);

/**
 * Whose principals a commit may change (`changesAccess`): the users it names, or "everyone". An empty list: nobody's.
 * A principal cache may keep the principals of other users across it (Store.accessVersion with a user id).
 */
export function accessScope(commit: Commit): readonly string[] | "everyone" {
  const users: string[] = [];
  for (const write of commit.writes) {
    if (!writeChangesAccess(write)) continue;
    const user = userOfAccessWrite(write);
    if (user === undefined) return "everyone";
    users.push(user);
  }
  return users;
}
