import { and, count, eq, inArray, isNull, lt, ne, sql } from "drizzle-orm";
import { failedPrecondition, notFound } from "../../domain/errors.js";
import { conditionFailed } from "../db-errors.js";
import { membershipFingerprint, tokenFingerprint } from "../fingerprints.js";
import type { GatehouseDb } from "./db.js";
import { preparedInserts } from "./prepared-insert.js";
import {
  applications,
  identityProviders,
  instances,
  lockoutPolicies,
  memberships,
  oneTimeCodes,
  organizations,
  outbox,
  passwordPolicies,
  personalAccessTokens,
  projectGrants,
  projectRoles,
  projects,
  smtpConfigs,
  userIdpLinks,
  users,
} from "./schema/index.js";
import { importedUserSet, type RowWrite } from "../commit.js";

/** How each kind of row write is applied on SQLite; runs inside the commit's transaction. */
export function createSqliteWrites(db: GatehouseDb) {
  /** A grant holds only role keys its project defines at commit time (a RemoveProjectRole may have won a race). */
  const requireRoleKeys = (projectId: string, roleKeys: string[]) => {
    // An empty list needs no early return: no key is then required, and the count of none is 0.
    // Stryker disable next-line OptionalChaining: a count() query always returns its one row
    const defined = db.select({ n: count() }).from(projectRoles).where(and(eq(projectRoles.projectId, projectId), inArray(projectRoles.roleKey, roleKeys))).get()?.n ?? 0;
    if (defined < new Set(roleKeys).size) throw conditionFailed("a role key was removed from the project concurrently");
  };
  // Row writes are compiled once (issue 12): drizzle builds an unprepared statement's SQL on every run, which cost a
  // write command more than SQLite's own work on its rows (an UpdateApplication's rename a fifth of the call). The
  // inserts of every table, and the other writes of the common commands, prepared with placeholders.
  const insertRow = preparedInserts(db.$client);
  const ph = sql.placeholder;
  // A value set from a placeholder goes in as SQL (drizzle's `set` types take no placeholder); text and integers only,
  // which need no mapping to SQLite's values.
  const setTo = (name: string) => sql`${ph(name)}`;
  const renameApplication = db.update(applications).set({ name: setTo("name"), nameKey: setTo("nameKey") }).where(eq(applications.id, ph("id"))).prepare();
  const verifyEmail = db.update(users).set({ emailVerified: true }).where(eq(users.id, ph("id"))).prepare();
  const verifyEmailAndActivate = db.update(users).set({ emailVerified: true, state: "active" }).where(eq(users.id, ph("id"))).prepare();
  const deleteCode = db.delete(oneTimeCodes).where(and(eq(oneTimeCodes.userId, ph("userId")), eq(oneTimeCodes.kind, ph("kind")))).prepare();
  const claimCodeAttempt = db
    .update(oneTimeCodes)
    .set({ attempts: sql`${oneTimeCodes.attempts} + 1` })
    .where(and(eq(oneTimeCodes.id, ph("id")), isNull(oneTimeCodes.usedAt), lt(oneTimeCodes.attempts, ph("max"))))
    .prepare();
  const useCode = db.update(oneTimeCodes).set({ usedAt: setTo("at") }).where(eq(oneTimeCodes.id, ph("id"))).prepare();
  const membershipsOf = db.select({ id: memberships.id, roles: memberships.roles }).from(memberships).where(eq(memberships.userId, ph("userId"))).prepare();
  const tokensOf = db.select({ id: personalAccessTokens.id, issuerUserId: personalAccessTokens.issuerUserId }).from(personalAccessTokens).where(eq(personalAccessTokens.userId, ph("userId"))).prepare();
  const projectExists = db.select({ id: projects.id }).from(projects).where(eq(projects.id, ph("id"))).prepare();
  const grantExists = db.select({ id: projectGrants.id }).from(projectGrants).where(eq(projectGrants.id, ph("id"))).prepare();
  const membershipFingerprintOf = (userId: string) => membershipFingerprint(membershipsOf.all({ userId }));

  /**
   * A project or grant membership may only be added while its scope exists: memberships have no foreign
   * key to it, and one added after the scope's removal read its members would dangle without an event.
   */
  const requireMembershipScope = (row: { level: string; scopeId: string }): void => {
    if (row.level === "project" && !projectExists.get({ id: row.scopeId })) {
      throw notFound("project.not_found", "the project was removed", { projectId: row.scopeId });
    }
    if (row.level === "project_grant" && !grantExists.get({ id: row.scopeId })) {
      throw notFound("project.grant.not_found", "the project grant was removed", { grantId: row.scopeId });
    }
  };

  return (write: RowWrite): void => {
    switch (write.kind) {
      case "instance.insert":
        insertRow(instances, write.row);
        return;
      case "organization.insert":
        insertRow(organizations, write.row);
        return;
      case "organization.setState":
        if (db.update(organizations).set({ state: write.state }).where(and(eq(organizations.id, write.id), ne(organizations.state, write.state))).run().changes === 0) {
          throw conditionFailed("the organization is gone or was changed concurrently");
        }
        return;
      case "user.insert":
        insertRow(users, write.row);
        return;
      case "token.insert":
        if (write.checkedMemberships !== undefined) {
          if (membershipFingerprintOf(write.row.userId) !== write.checkedMemberships) throw conditionFailed("the user's roles changed while the token was issued");
        }
        insertRow(personalAccessTokens, write.row);
        return;
      case "token.delete":
        if (db.delete(personalAccessTokens).where(eq(personalAccessTokens.id, write.id)).run().changes === 0) throw conditionFailed("the token is gone");
        return;
      case "membership.insert":
        requireMembershipScope(write.row);
        if (write.checkedTokens !== undefined && tokenFingerprint(write.row.userId, tokensOf.all({ userId: write.row.userId })) !== write.checkedTokens) {
          throw conditionFailed("the user's tokens changed while the role was granted");
        }
        insertRow(memberships, write.row);
        return;
      case "membership.delete":
        // Stryker disable next-line ConditionalExpression: without a role to keep, requireOtherRoleHolder finds the membership holds no such role and returns
        if (write.keepRoleHolder !== undefined) requireOtherRoleHolder(db, write.id, write.keepRoleHolder);
        // Conditional: of two concurrent removals, the second finds nothing and rolls back.
        if (db.delete(memberships).where(eq(memberships.id, write.id)).run().changes === 0) throw conditionFailed("the membership is gone");
        return;
      case "project.insert":
        insertRow(projects, write.row);
        return;
      case "projectRole.insert":
        insertRow(projectRoles, write.row);
        return;
      case "projectGrant.insert":
        requireRoleKeys(write.row.projectId, write.row.roleKeys);
        insertRow(projectGrants, write.row);
        return;
      case "project.rename":
        if (db.update(projects).set({ name: write.name, nameKey: write.nameKey }).where(eq(projects.id, write.id)).run().changes === 0) throw conditionFailed("the project is gone");
        return;
      case "project.setState":
        if (db.update(projects).set({ state: write.state }).where(and(eq(projects.id, write.id), ne(projects.state, write.state))).run().changes === 0) {
          throw conditionFailed("the project is gone or was changed concurrently");
        }
        return;
      case "project.delete":
        if (projectStillReferenced(db, write.id)) throw conditionFailed("something was added to the project concurrently");
        if (db.delete(projects).where(eq(projects.id, write.id)).run().changes === 0) throw conditionFailed("the project is gone");
        return;
      case "projectRole.delete": {
        const role = and(eq(projectRoles.projectId, write.projectId), eq(projectRoles.roleKey, write.roleKey));
        if (db.delete(projectRoles).where(role).run().changes === 0) throw conditionFailed("the project role is gone");
        return;
      }
      case "projectGrant.setRoleKeys": {
        const grant = db.select({ projectId: projectGrants.projectId }).from(projectGrants).where(eq(projectGrants.id, write.id)).get();
        if (!grant) throw conditionFailed("the grant is gone");
        requireRoleKeys(grant.projectId, write.roleKeys);
        db.update(projectGrants).set({ roleKeys: write.roleKeys }).where(eq(projectGrants.id, write.id)).run();
        return;
      }
      case "projectGrant.delete": {
        // Stryker disable next-line OptionalChaining: a count() query always returns its one row
        const members = db.select({ n: count() }).from(memberships).where(and(eq(memberships.level, "project_grant"), eq(memberships.scopeId, write.id))).get()?.n ?? 0;
        if (members > 0) throw conditionFailed("a member was added to the grant concurrently");
        if (db.delete(projectGrants).where(eq(projectGrants.id, write.id)).run().changes === 0) throw conditionFailed("the grant is gone");
        return;
      }
      case "application.insert":
        insertRow(applications, write.row);
        return;
      case "application.rename":
        renameApplication.run({ name: write.name, nameKey: write.nameKey, id: write.id });
        return;
      case "identityProvider.insert":
        insertRow(identityProviders, write.row);
        return;
      case "identityProvider.replace":
        db.update(identityProviders).set(write.fields).where(eq(identityProviders.id, write.id)).run();
        return;
      case "application.setState":
        if (db.update(applications).set({ state: write.state }).where(and(eq(applications.id, write.id), ne(applications.state, write.state))).run().changes === 0) {
          throw conditionFailed("the application is gone or was changed concurrently");
        }
        return;
      case "application.replaceSecretHash": {
        const previous = write.previousHash === null ? isNull(applications.clientSecretHash) : eq(applications.clientSecretHash, write.previousHash);
        if (db.update(applications).set({ clientSecretHash: write.hash }).where(and(eq(applications.id, write.id), previous)).run().changes === 0) {
          throw conditionFailed("the application is gone or its secret was replaced concurrently");
        }
        return;
      }
      case "application.delete":
        if (db.delete(applications).where(eq(applications.id, write.id)).run().changes === 0) throw conditionFailed("the application is gone");
        return;
      case "userIdpLink.delete": {
        const link = and(eq(userIdpLinks.idpId, write.idpId), eq(userIdpLinks.externalUserId, write.externalUserId));
        if (db.delete(userIdpLinks).where(link).run().changes === 0) throw conditionFailed("the IDP link is gone");
        return;
      }
      case "identityProvider.delete": {
        // Stryker disable next-line OptionalChaining: a count() query always returns its one row
        const left = db.select({ n: count() }).from(userIdpLinks).where(eq(userIdpLinks.idpId, write.id)).get()?.n ?? 0;
        if (left > 0) throw conditionFailed("a user was linked to the identity provider concurrently");
        if (db.delete(identityProviders).where(eq(identityProviders.id, write.id)).run().changes === 0) throw conditionFailed("the identity provider is gone");
        return;
      }
      case "user.emailChange":
        db.update(users).set({ email: write.email, emailKey: write.emailKey, emailVerified: write.verified }).where(eq(users.id, write.id)).run();
        return;
      case "user.emailVerified":
        (write.activate ? verifyEmailAndActivate : verifyEmail).run({ id: write.id });
        return;
      case "user.setInactive":
        if (db.update(users).set({ inactive: write.inactive }).where(and(eq(users.id, write.id), eq(users.inactive, !write.inactive))).run().changes === 0) {
          throw conditionFailed("the user is gone or was changed concurrently");
        }
        return;
      case "user.setLocked": {
        const set = { locked: write.locked, ...(write.locked ? {} : { failedPasswordAttempts: 0 }) };
        if (db.update(users).set(set).where(and(eq(users.id, write.id), eq(users.locked, !write.locked))).run().changes === 0) {
          throw conditionFailed("the user is gone or was changed concurrently");
        }
        return;
      }
      case "user.setPassword": {
        if (write.checkedMemberships !== undefined) {
          if (membershipFingerprintOf(write.id) !== write.checkedMemberships) throw conditionFailed("the user's roles changed while the password was set");
        }
        const set = {
          passwordHash: write.passwordHash,
          failedPasswordAttempts: 0,
          ...(write.changeRequired === undefined ? {} : { passwordChangeRequired: write.changeRequired }),
          ...(write.activate ? { state: "active" as const } : {}),
        };
        const previous = write.previousHash === undefined ? undefined : write.previousHash === null ? isNull(users.passwordHash) : eq(users.passwordHash, write.previousHash);
        if (db.update(users).set(set).where(and(eq(users.id, write.id), previous)).run().changes === 0) {
          throw conditionFailed("the user is gone or its password was changed concurrently");
        }
        return;
      }
      case "user.importUpdate": {
        if (write.checkedMemberships !== undefined) {
          if (membershipFingerprintOf(write.id) !== write.checkedMemberships) throw conditionFailed("the user's roles changed while it was re-imported");
        }
        if (db.update(users).set(importedUserSet(write)).where(and(eq(users.id, write.id), eq(users.type, "human"))).run().changes === 0) {
          throw conditionFailed("the user is gone");
        }
        return;
      }
      case "user.passwordChecked": {
        const usable = and(eq(users.id, write.id), eq(users.locked, false), eq(users.inactive, false), sameHash(write.verifiedHash));
        if (db.update(users).set({ failedPasswordAttempts: 0 }).where(usable).run().changes === 0) {
          throw conditionFailed("the user is gone, locked, deactivated or has another password");
        }
        return;
      }
      case "user.passwordFailed": {
        const unchanged = and(eq(users.id, write.id), eq(users.locked, false), eq(users.failedPasswordAttempts, write.attempts), sameHash(write.verifiedHash));
        const set = { failedPasswordAttempts: write.attempts + 1, ...(write.lock ? { locked: true } : {}) };
        if (db.update(users).set(set).where(unchanged).run().changes === 0) throw conditionFailed("the user is gone, locked, or its count or password changed concurrently");
        return;
      }
      case "user.delete": {
        // Stryker disable next-line OptionalChaining: a count() query always returns its one row
        const left = db.select({ n: count() }).from(memberships).where(eq(memberships.userId, write.id)).get()?.n ?? 0;
        if (left > 0) throw conditionFailed("the user got a membership concurrently");
        if (db.delete(users).where(eq(users.id, write.id)).run().changes === 0) throw conditionFailed("the user is gone");
        return;
      }
      case "token.deleteOfUser":
        db.delete(personalAccessTokens).where(eq(personalAccessTokens.userId, write.userId)).run();
        return;
      case "code.deleteOfUser":
        db.delete(oneTimeCodes).where(eq(oneTimeCodes.userId, write.userId)).run();
        return;
      case "userIdpLink.deleteOfUser":
        db.delete(userIdpLinks).where(eq(userIdpLinks.userId, write.userId)).run();
        return;
      case "outbox.deleteOfUser":
        db.delete(outbox).where(eq(outbox.userId, write.userId)).run();
        return;
      case "userIdpLink.insert":
        // The link column has no foreign key; this keeps a link from naming an IDP removed since it was checked.
        if (!db.select({ id: identityProviders.id }).from(identityProviders).where(eq(identityProviders.id, write.row.idpId)).get()) {
          throw failedPrecondition("idp.not_found", "the identity provider was removed", { configId: write.row.idpId });
        }
        insertRow(userIdpLinks, write.row);
        return;
      case "code.replace":
        // One pending code per user and kind: the new one voids the old.
        deleteCode.run({ userId: write.row.userId, kind: write.row.kind });
        insertRow(oneTimeCodes, write.row);
        return;
      case "code.void":
        deleteCode.run({ userId: write.userId, kind: write.codeKind });
        return;
      case "code.claimAttempt": {
        if (claimCodeAttempt.run({ id: write.id, max: write.max }).changes === 0) throw conditionFailed("the code is used up or void");
        return;
      }
      case "code.use":
        useCode.run({ at: write.at, id: write.id });
        return;
      case "outbox.insert":
        insertRow(outbox, { ...write.row, userId: write.row.userId ?? null });
        return;
      case "passwordPolicy.insert":
        insertRow(passwordPolicies, write.row);
        return;
      case "lockoutPolicy.put":
        db.insert(lockoutPolicies).values(write.row).onConflictDoUpdate({ target: lockoutPolicies.instanceId, set: { maxPasswordAttempts: write.row.maxPasswordAttempts } }).run();
        return;
      case "smtp.insert":
        insertRow(smtpConfigs, write.row);
        return;
      case "smtp.update":
        db.update(smtpConfigs)
          .set({ ...write.settings, ...(write.dropPassword ? { passwordSealed: null } : {}) })
          .where(eq(smtpConfigs.instanceId, write.instanceId))
          .run();
        return;
      case "smtp.setPassword":
        db.update(smtpConfigs).set({ passwordSealed: write.passwordSealed }).where(eq(smtpConfigs.instanceId, write.instanceId)).run();
        return;
      case "smtp.delete":
        db.delete(smtpConfigs).where(eq(smtpConfigs.instanceId, write.instanceId)).run();
        return;
      case "outbox.sent":
        requireClaim(write, db.update(outbox).set({ status: "sent", attempts: write.attempts }).where(claimedBy(write)).run().changes);
        return;
      case "outbox.retry":
        requireClaim(
          write,
          db.update(outbox).set({ attempts: write.attempts, nextAttemptAt: write.nextAttemptAt, claimedBy: null, claimedUntil: null }).where(claimedBy(write)).run().changes,
        );
        return;
      case "outbox.failed":
        requireClaim(write, db.update(outbox).set({ status: "failed", attempts: write.attempts }).where(claimedBy(write)).run().changes);
        return;
      case "outbox.copied":
        // A copied message is parked (pending, for an SMTP server): its claim ends with the copy, as a retry's does.
        db.update(outbox).set({ copiedAt: write.at, claimedBy: null, claimedUntil: null }).where(eq(outbox.id, write.id)).run();
        return;
      default:
        // A write the store does not know must fail the commit, never be skipped silently (the type system
        // rules it out; this guards what it cannot see, such as a row built at run time).
        throw new Error(`unknown row write ${JSON.stringify((write as { kind?: unknown }).kind)}`);
    }
  };
}

type OutcomeWrite = Extract<RowWrite, { kind: "outbox.sent" | "outbox.retry" | "outbox.failed" }>;

/** The message of an outcome; with an owner, only while it is still pending and that worker's claim. */
/** "The stored password hash is still `hash`": a password's verdict holds only for the hash it was judged against. */
const sameHash = (hash: string | undefined) => (hash === undefined ? undefined : eq(users.passwordHash, hash));

const claimedBy = (write: OutcomeWrite) =>
  and(eq(outbox.id, write.id), write.owner !== undefined ? and(eq(outbox.status, "pending"), eq(outbox.claimedBy, write.owner)) : undefined);

/** An outcome recorded by a worker that no longer holds the message (another took over its lease) fails the commit. */
const requireClaim = (write: OutcomeWrite, changes: number) => {
  if (write.owner !== undefined && changes === 0) throw conditionFailed(`outbox message ${write.id} is no longer claimed by this worker`);
};

/**
 * Whether a role, grant, project membership or application still names the project. Grant members
 * need no check here: a grant with members cannot be removed, and a grant keeps its project.
 */
function projectStillReferenced(db: GatehouseDb, projectId: string): boolean {
  const one = (table: typeof projectRoles | typeof projectGrants | typeof applications) =>
    // Stryker disable next-line OptionalChaining: a count() query always returns its one row
    db.select({ n: count() }).from(table).where(eq(table.projectId, projectId)).get()?.n ?? 0;
  // Stryker disable next-line OptionalChaining: a count() query always returns its one row
  const members = db.select({ n: count() }).from(memberships).where(and(eq(memberships.level, "project"), eq(memberships.scopeId, projectId))).get()?.n ?? 0;
  return one(projectRoles) + one(projectGrants) + one(applications) + members > 0;
}

/**
 * Inside the commit's transaction (so concurrent removals are serialized): fails unless another
 * membership of the same scope still holds `role` after `membershipId` goes.
 */
function requireOtherRoleHolder(db: GatehouseDb, membershipId: string, role: string): void {
  const membership = db.select().from(memberships).where(eq(memberships.id, membershipId)).get();
  if (!membership || !membership.roles.includes(role)) return;
  const others =
    // Stryker disable next-line OptionalChaining: a count() query always returns its one row
    db
      .select({ n: count() })
      .from(memberships)
      .where(
        and(
          eq(memberships.level, membership.level),
          eq(memberships.scopeId, membership.scopeId),
          ne(memberships.id, membershipId),
          sql`EXISTS (SELECT 1 FROM json_each(${memberships.roles}) WHERE json_each.value = ${role})`,
        ),
      )
      .get()?.n ?? 0;
  if (others === 0) throw conditionFailed(`the last holder of ${role} would be removed`);
}
