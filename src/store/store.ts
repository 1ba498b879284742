import type { StoredEvent } from "../events/event.js";
import type { Commit } from "./commit.js";
import type {
  ApplicationRow,
  IdentityProviderRow,
  InstanceRow,
  LockoutPolicyRow,
  MembershipRow,
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

/** A delivery worker's claim on due outbox messages (`Store.claimDueOutbox`). */
export interface OutboxClaim {
  now: number;
  limit: number;
  leaseMs: number;
  /** The claiming worker, unique per process (a replica). */
  owner: string;
  /**
   * Leave out the messages already copied to the mail dir (no SMTP configuration exists): they wait, parked, for an
   * SMTP server, and neither fill the claim nor hold back their user's newer messages, which get copied in turn.
   */
  skipCopied?: boolean;
}

/** Which applications a list shows: those of one project, optionally only one state. */
export interface ApplicationFilter {
  projectId: string;
  state?: ApplicationRow["state"];
}

/** Which projects a list shows: those of one organization; name contains `nameContains` (lower-cased key); only `ids` when set. */
export interface ProjectFilter {
  orgId: string;
  nameContains?: string;
  state?: ProjectRow["state"];
  ids?: string[];
}

/** Which organizations a list shows: those of one instance; the name contains `nameContains` (lower-cased key), the state is `state`. */
export interface OrganizationFilter {
  instanceId: string;
  nameContains?: string;
  state?: OrganizationRow["state"];
}

/**
 * The users of one organization (ListUsers): all of them, or those with one user name or email key. The instance comes
 * with it so each filter is served by an index whatever the organization's size (the user-name and email keys are
 * indexed per instance).
 */
export interface UserFilter {
  instanceId: string;
  orgId: string;
  userNameKey?: string;
  emailKey?: string;
}

export interface EventFilter {
  aggregateType?: string;
  aggregateId?: string;
  resourceOwner?: string;
  /** Only events with sequence >= this. */
  fromSequence?: number;
  /** Only events with sequence > this (page cursor). */
  afterSequence?: number;
  limit: number;
}

/** Where an event stands in the log: all a read's `details` (and an expected sequence) need of it. */
export type EventMark = Pick<StoredEvent, "sequence" | "aggregateVersion" | "resourceOwner" | "createdAt">;

/** The first and the last event of one aggregate, as marks: the source of every read's `details` (no payload parsed). */
export interface AggregateSpan {
  first: EventMark;
  last: EventMark;
}

/**
 * Gatehouse's storage, as commands and queries see it. Signatures are async so a networked backend
 * (PostgreSQL) can implement the same contract; the embedded SQLite backend answers synchronously.
 * Uniqueness and referential rules are enforced by the backend's constraints inside `commit`, and
 * surface as DomainErrors (src/store/db-errors.ts). Engines: sqlite/ (the embedded default) and postgres/.
 */
export interface Store {
  /** Applies the writes and appends the events in one transaction; returns the stored events in order. */
  commit(commit: Commit): Promise<StoredEvent[]>;
  /**
   * Changes (before the commit is acknowledged) whenever a commit that `changesAccess` is applied, and whenever
   * another process wrote to the database: a principal read while it had a value is current while it keeps it.
   * With a user id, the version of that user's principals only: it changes with every commit that may change them
   * (`accessScope` names the user, or everyone) and may stay across commits that change only other users'. An
   * engine may change it with every access-changing commit (PostgreSQL does: one counter), never less often.
   * Async: on a database several processes share, the version lives in the database (one primary-key read), so a
   * change committed by one process is seen by the very next call on every other.
   */
  accessVersion(userId?: string): Promise<string>;
  /**
   * Resolves once everything committed so far is durable (at once when nothing waits for a disk sync). Every answer
   * and every mail waits for it, so nothing leaves the process that a power loss could still undo.
   */
  durable(): Promise<void>;

  getInstance(): Promise<InstanceRow | undefined>;
  findOrganizationById(id: string): Promise<OrganizationRow | undefined>;
  /** One page of the instance's organizations in creation order, after the given position, optionally filtered. */
  listOrganizationsPage(filter: OrganizationFilter & { afterPosition?: number; limit: number }): Promise<{ row: OrganizationRow; position: number }[]>;
  countOrganizations(filter: OrganizationFilter): Promise<number>;
  findUserById(id: string): Promise<UserRow | undefined>;
  /** The instance's user with this user name key (lower-cased; user names are unique per instance), if any. */
  findUserByUserNameKey(instanceId: string, userNameKey: string): Promise<UserRow | undefined>;
  /**
   * A bulk import's matches, in one read for a whole chunk: the instance's users with any of `userNameKeys`, and the
   * organization's users with any of `externalIds` (each row once, in no particular order).
   */
  findUsersByNameKeysOrExternalIds(filter: { instanceId: string; userNameKeys: string[]; orgId: string; externalIds: string[] }): Promise<UserRow[]>;
  findTokenById(id: string): Promise<TokenRow | undefined>;
  /** One page of a user's tokens in creation order, after the given position. */
  listTokensPage(filter: { userId: string; afterPosition?: number; limit: number }): Promise<{ row: TokenRow; position: number }[]>;
  countTokensOfUser(userId: string): Promise<number>;
  /** A user's personal access tokens, oldest first. */
  listTokensOfUser(userId: string): Promise<TokenRow[]>;
  listIdpLinksOfUser(userId: string): Promise<UserIdpLinkRow[]>;
  /** The user's pending code of a kind, if any. */
  findCode(userId: string, kind: OneTimeCodeRow["kind"]): Promise<OneTimeCodeRow | undefined>;
  /** Users of an organization in creation order, after the given position, with optional exact filters. */
  listUsers(filter: UserFilter & { afterPosition?: number; limit: number }): Promise<{ row: UserRow; position: number }[]>;
  countUsers(filter: UserFilter): Promise<number>;
  getPasswordPolicy(instanceId: string): Promise<PasswordPolicyRow | undefined>;
  getLockoutPolicy(instanceId: string): Promise<LockoutPolicyRow | undefined>;
  /** Messages of the outbox, oldest first (the delivery worker and tests read them). */
  listOutbox(filter: { status?: OutboxRow["status"]; limit: number }): Promise<OutboxRow[]>;
  /** Every message queued for a user (any status), oldest first. */
  listOutboxOfUser(userId: string): Promise<OutboxRow[]>;
  /** Pending messages due at `now`, oldest first. */
  listDueOutbox(now: number, limit: number): Promise<OutboxRow[]>;
  /**
   * Claims, atomically, up to `limit` pending messages due at `now` for the delivery worker `owner`, until `now + leaseMs`,
   * and returns them claimed, oldest (queued first) first. A message is claimable while nobody holds it: never
   * claimed, or its lease has ended (its worker died mid-send), or it is `owner`'s own (renewed). Of several workers
   * claiming at once, each message goes to one (PostgreSQL: FOR UPDATE SKIP LOCKED). In order per recipient: a message
   * of a user is claimed only together with every older pending message of that user, in the same claim — never while
   * an older one is held by another worker, not yet due (a retry waits), or left out by `limit` — so one worker has a
   * user's due messages at a time, in order. Messages that name no user are not ordered.
   * Not an event: a claim is no domain state; what the worker then records (`outbox.sent`, …) is.
   */
  claimDueOutbox(claim: OutboxClaim): Promise<OutboxRow[]>;
  /** Ends every claim `owner` still holds on a pending message (its worker is stopping): any worker may take them now. */
  releaseOutboxClaims(owner: string): Promise<void>;
  /**
   * Deletes at most `limit` finished messages (sent or failed) queued before `queuedBefore` — failed ones first, then
   * sent ones, each oldest first (the order of the `outbox_finished` index, so a sweep reads no more rows than it
   * deletes); answers how many. The retention of the outbox: a delivered mail's sealed text (which carries its code) has no use left, and
   * its events (queued, sent, failed) stay as the audit trail. Not an event: a finished message is no domain state.
   */
  pruneFinishedOutbox(filter: { queuedBefore: number; limit: number }): Promise<number>;
  getSmtpConfig(instanceId: string): Promise<SmtpConfigRow | undefined>;
  listMembershipsOfUser(userId: string): Promise<MembershipRow[]>;
  findMembership(userId: string, level: MembershipRow["level"], scopeId: string): Promise<MembershipRow | undefined>;
  /** Members of one scope, in the order they were added. */
  listMembershipsOfScope(level: MembershipRow["level"], scopeId: string): Promise<MembershipRow[]>;
  /** One page of the members of one scope, in the order they were added, after the given position. */
  listMembershipsOfScopePage(filter: { level: MembershipRow["level"]; scopeId: string; afterPosition?: number; limit: number }): Promise<{ row: MembershipRow; position: number }[]>;
  countMembershipsOfScope(level: MembershipRow["level"], scopeId: string): Promise<number>;
  /** How many members of one scope hold `role`, leaving out the membership `exceptId`. */
  countRoleHolders(level: MembershipRow["level"], scopeId: string, role: string, exceptId: string): Promise<number>;

  findProjectById(id: string): Promise<ProjectRow | undefined>;
  listProjectRoles(projectId: string): Promise<ProjectRoleRow[]>;
  findProjectGrantById(id: string): Promise<ProjectGrantRow | undefined>;
  /** One page of an organization's projects in creation order, after the given position, optionally filtered. */
  listProjectsPage(filter: ProjectFilter & { afterPosition?: number; limit: number }): Promise<{ row: ProjectRow; position: number }[]>;
  countProjects(filter: ProjectFilter): Promise<number>;
  /** One page of a project's roles in the order they were added, after the given position. */
  listProjectRolesPage(filter: { projectId: string; afterPosition?: number; limit: number }): Promise<{ row: ProjectRoleRow; position: number }[]>;
  countProjectRoles(projectId: string): Promise<number>;
  /** A project's grants in creation order. */
  listProjectGrantsOfProject(projectId: string): Promise<ProjectGrantRow[]>;
  /** One page of a project's grants in creation order, after the given position. */
  listProjectGrantsPage(filter: { projectId: string; afterPosition?: number; limit: number }): Promise<{ row: ProjectGrantRow; position: number }[]>;
  countProjectGrants(projectId: string): Promise<number>;
  findApplicationById(id: string): Promise<ApplicationRow | undefined>;
  /** Applications of a project, in creation order. */
  listApplicationsOfProject(projectId: string): Promise<ApplicationRow[]>;
  findIdentityProviderById(id: string): Promise<IdentityProviderRow | undefined>;
  /** One page of a project's applications in creation order, after the given position, optionally of one state. */
  listApplicationsPage(filter: ApplicationFilter & { afterPosition?: number; limit: number }): Promise<{ row: ApplicationRow; position: number }[]>;
  countApplications(filter: ApplicationFilter): Promise<number>;
  /** One page of the identity providers owned by any of `ownerIds`, in creation order, after the given position. */
  listIdentityProvidersPage(filter: { ownerIds: string[]; afterPosition?: number; limit: number }): Promise<{ row: IdentityProviderRow; position: number }[]>;
  countIdentityProviders(filter: { ownerIds: string[] }): Promise<number>;
  /** Every user's link to an IDP, with the linked user's organization, oldest first. */
  listIdpLinksOfIdp(idpId: string): Promise<(UserIdpLinkRow & { orgId: string })[]>;

  listEvents(filter: EventFilter): Promise<StoredEvent[]>;
  /**
   * How many events match, counting at most EVENT_COUNT_LIMIT: a count is work any reader of the log can ask for, so it
   * is bounded. Exact and O(1) when only `fromSequence` is set (sequences are gap-free from 1 and events are never
   * deleted, so it is arithmetic on the last sequence), whatever the size of the log.
   */
  countEvents(filter: Omit<EventFilter, "afterSequence" | "limit">): Promise<number>;
  /**
   * The aggregate's first and last event. With `createdBy`, "first" is the newest event of that type: an object that
   * can be removed and created again under the same id (the instance's SMTP configuration) starts anew each time.
   */
  aggregateSpan(aggregateType: string, aggregateId: string, createdBy?: string): Promise<AggregateSpan | undefined>;

  /** The value sealed under the master key the database was first opened with (see master-key-probe.ts). */
  getMasterKeyProbe(): Promise<string | undefined>;
  /** Stores the probe once; a probe already there is kept. Not an event: it is no domain state. */
  setMasterKeyProbe(sealed: string): Promise<void>;

  close(): Promise<void>;
}
