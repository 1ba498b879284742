import { DomainError } from "../domain/errors.js";
import type { NewEvent } from "../events/event.js";
import type {
  ApplicationRow,
  IdentityProviderRow,
  InstanceRow,
  MembershipRow,
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
} from "./rows.js";

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
  /** Conditional: fails the commit (`store.condition_failed`) unless the flag changes, so of two concurrent calls one wins. */
  | { kind: "user.setInactive"; id: string; inactive: boolean }
  /** Conditional, like `user.setInactive`. */
  | { kind: "user.setLocked"; id: string; locked: boolean }
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
  | { kind: "code.replace"; row: OneTimeCodeRow }
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

/** Writes that add a row no principal was built from yet: a new user, organization or token changes no cached one. */
const CREATIONS = new Set<RowWrite["kind"]>(["user.insert", "organization.insert", "token.insert"]);

/**
 * Whether a commit may change what an existing principal is made of (its token, its user's flags, its organization's
 * state, its memberships): caches of principals must then be dropped (`Store.accessVersion`). By prefix, so a new
 * kind of write on these rows invalidates by default.
 */
export function changesAccess(commit: Commit): boolean {
  return commit.writes.some(
    (write) => !CREATIONS.has(write.kind) && /^(user|token|membership|organization)\./.test(write.kind),
  );
}
