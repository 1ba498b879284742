import { and, count, eq, inArray, isNull, lt, ne, sql } from "drizzle-orm";
import { failedPrecondition, notFound } from "../../domain/errors.js";
import { conditionFailed } from "../db-errors.js";
import { membershipFingerprint, tokenFingerprint } from "../fingerprints.js";
import { importedUserSet, type RowWrite } from "../commit.js";
import type { PostgresDb } from "./pg-db.js";
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

/** The commit's transaction. */
export type PostgresTx = Parameters<Parameters<PostgresDb["transaction"]>[0]>[0];

/** How many rows an UPDATE or DELETE touched. */
const changed = (result: { rowCount: number | null }) => result.rowCount ?? 0;

type OutcomeWrite = Extract<RowWrite, { kind: "outbox.sent" | "outbox.retry" | "outbox.failed" }>;

/** The message of an outcome; with an owner, only while it is still pending and that worker's claim (row-locked by the UPDATE). */
/** "The stored password hash is still `hash`": a password's verdict holds only for the hash it was judged against. */
const sameHash = (hash: string | undefined) => (hash === undefined ? undefined : eq(users.passwordHash, hash));

const claimedBy = (write: OutcomeWrite) =>
  and(eq(outbox.id, write.id), write.owner !== undefined ? and(eq(outbox.status, "pending"), eq(outbox.claimedBy, write.owner)) : undefined);

/** An outcome recorded by a worker that no longer holds the message (another took over its lease) fails the commit. */
const requireClaim = (write: OutcomeWrite, changes: number) => {
  if (write.owner !== undefined && changes === 0) throw conditionFailed(`outbox message ${write.id} is no longer claimed by this worker`);
};

/** The one row of a count() query. */
async function countOf(query: PromiseLike<{ n: number }[]>): Promise<number> {
  const [row] = await query;
  return row?.n ?? 0;
}

/** Whether `role` is one of a membership's roles (a JSON array). */
const holdsRole = (role: string) => sql`EXISTS (SELECT 1 FROM json_array_elements_text(${memberships.roles}) AS held(role) WHERE held.role = ${role})`;

/**
 * How each kind of row write is applied on PostgreSQL; runs inside the commit's transaction, after it took the commit
 * lock (pg-commits.ts), so every read here sees every earlier commit and no later one can change what it read. Each
 * case does what its twin in sqlite-writes.ts does, with the same conditions and the same errors.
 */
export async function applyPostgresWrite(tx: PostgresTx, write: RowWrite): Promise<void> {
  switch (write.kind) {
    case "instance.insert":
      await tx.insert(instances).values(write.row);
      return;
    case "organization.insert":
      await tx.insert(organizations).values(write.row);
      return;
    case "organization.setState":
      if (changed(await tx.update(organizations).set({ state: write.state }).where(and(eq(organizations.id, write.id), ne(organizations.state, write.state)))) === 0) {
        throw conditionFailed("the organization is gone or was changed concurrently");
      }
      return;
    case "user.insert":
      await tx.insert(users).values(write.row);
      return;
    case "token.insert":
      if (write.checkedMemberships !== undefined) {
        const current = await tx.select({ id: memberships.id, roles: memberships.roles }).from(memberships).where(eq(memberships.userId, write.row.userId));
        if (membershipFingerprint(current) !== write.checkedMemberships) throw conditionFailed("the user's roles changed while the token was issued");
      }
      await tx.insert(personalAccessTokens).values(write.row);
      return;
    case "token.delete":
      if (changed(await tx.delete(personalAccessTokens).where(eq(personalAccessTokens.id, write.id))) === 0) throw conditionFailed("the token is gone");
      return;
    case "membership.insert":
      await requireMembershipScope(tx, write.row);
      if (write.checkedTokens !== undefined && (await tokenFingerprintOf(tx, write.row.userId)) !== write.checkedTokens) {
        throw conditionFailed("the user's tokens changed while the role was granted");
      }
      await tx.insert(memberships).values(write.row);
      return;
    case "membership.delete":
      if (write.keepRoleHolder !== undefined) await requireOtherRoleHolder(tx, write.id, write.keepRoleHolder);
      if (changed(await tx.delete(memberships).where(eq(memberships.id, write.id))) === 0) throw conditionFailed("the membership is gone");
      return;
    case "project.insert":
      await tx.insert(projects).values(write.row);
      return;
    case "projectRole.insert":
      await tx.insert(projectRoles).values(write.row);
      return;
    case "projectGrant.insert":
      await requireRoleKeys(tx, write.row.projectId, write.row.roleKeys);
      await tx.insert(projectGrants).values(write.row);
      return;
    case "project.rename":
      if (changed(await tx.update(projects).set({ name: write.name, nameKey: write.nameKey }).where(eq(projects.id, write.id))) === 0) throw conditionFailed("the project is gone");
      return;
    case "project.setState":
      if (changed(await tx.update(projects).set({ state: write.state }).where(and(eq(projects.id, write.id), ne(projects.state, write.state)))) === 0) {
        throw conditionFailed("the project is gone or was changed concurrently");
      }
      return;
    case "project.delete":
      if (await projectStillReferenced(tx, write.id)) throw conditionFailed("something was added to the project concurrently");
      if (changed(await tx.delete(projects).where(eq(projects.id, write.id))) === 0) throw conditionFailed("the project is gone");
      return;
    case "projectRole.delete": {
      const role = and(eq(projectRoles.projectId, write.projectId), eq(projectRoles.roleKey, write.roleKey));
      if (changed(await tx.delete(projectRoles).where(role)) === 0) throw conditionFailed("the project role is gone");
      return;
    }
    case "projectGrant.setRoleKeys": {
      const [grant] = await tx.select({ projectId: projectGrants.projectId }).from(projectGrants).where(eq(projectGrants.id, write.id));
      if (!grant) throw conditionFailed("the grant is gone");
      await requireRoleKeys(tx, grant.projectId, write.roleKeys);
      await tx.update(projectGrants).set({ roleKeys: write.roleKeys }).where(eq(projectGrants.id, write.id));
      return;
    }
    case "projectGrant.delete": {
      const members = await countOf(tx.select({ n: count() }).from(memberships).where(and(eq(memberships.level, "project_grant"), eq(memberships.scopeId, write.id))));
      if (members > 0) throw conditionFailed("a member was added to the grant concurrently");
      if (changed(await tx.delete(projectGrants).where(eq(projectGrants.id, write.id))) === 0) throw conditionFailed("the grant is gone");
      return;
    }
    case "application.insert":
      await tx.insert(applications).values(write.row);
      return;
    case "application.rename":
      await tx.update(applications).set({ name: write.name, nameKey: write.nameKey }).where(eq(applications.id, write.id));
      return;
    case "identityProvider.insert":
      await tx.insert(identityProviders).values(write.row);
      return;
    case "identityProvider.replace":
      await tx.update(identityProviders).set(write.fields).where(eq(identityProviders.id, write.id));
      return;
    case "application.setState":
      if (changed(await tx.update(applications).set({ state: write.state }).where(and(eq(applications.id, write.id), ne(applications.state, write.state)))) === 0) {
        throw conditionFailed("the application is gone or was changed concurrently");
      }
      return;
    case "application.replaceSecretHash": {
      const previous = write.previousHash === null ? isNull(applications.clientSecretHash) : eq(applications.clientSecretHash, write.previousHash);
      if (changed(await tx.update(applications).set({ clientSecretHash: write.hash }).where(and(eq(applications.id, write.id), previous))) === 0) {
        throw conditionFailed("the application is gone or its secret was replaced concurrently");
      }
      return;
    }
    case "application.delete":
      if (changed(await tx.delete(applications).where(eq(applications.id, write.id))) === 0) throw conditionFailed("the application is gone");
      return;
    case "userIdpLink.delete": {
      const link = and(eq(userIdpLinks.idpId, write.idpId), eq(userIdpLinks.externalUserId, write.externalUserId));
      if (changed(await tx.delete(userIdpLinks).where(link)) === 0) throw conditionFailed("the IDP link is gone");
      return;
    }
    case "identityProvider.delete": {
      const left = await countOf(tx.select({ n: count() }).from(userIdpLinks).where(eq(userIdpLinks.idpId, write.id)));
      if (left > 0) throw conditionFailed("a user was linked to the identity provider concurrently");
      if (changed(await tx.delete(identityProviders).where(eq(identityProviders.id, write.id))) === 0) throw conditionFailed("the identity provider is gone");
      return;
    }
    case "user.emailChange":
      await tx.update(users).set({ email: write.email, emailKey: write.emailKey, emailVerified: write.verified }).where(eq(users.id, write.id));
      return;
    case "user.emailVerified":
      await tx
        .update(users)
        .set({ emailVerified: true, ...(write.activate ? { state: "active" as const } : {}) })
        .where(eq(users.id, write.id));
      return;
    case "user.setInactive":
      if (changed(await tx.update(users).set({ inactive: write.inactive }).where(and(eq(users.id, write.id), eq(users.inactive, !write.inactive)))) === 0) {
        throw conditionFailed("the user is gone or was changed concurrently");
      }
      return;
    case "user.setLocked": {
      const set = { locked: write.locked, ...(write.locked ? {} : { failedPasswordAttempts: 0 }) };
      if (changed(await tx.update(users).set(set).where(and(eq(users.id, write.id), eq(users.locked, !write.locked)))) === 0) {
        throw conditionFailed("the user is gone or was changed concurrently");
      }
      return;
    }
    case "user.setPassword": {
      if (write.checkedMemberships !== undefined) {
        const current = await tx.select({ id: memberships.id, roles: memberships.roles }).from(memberships).where(eq(memberships.userId, write.id));
        if (membershipFingerprint(current) !== write.checkedMemberships) throw conditionFailed("the user's roles changed while the password was set");
      }
      const set = {
        passwordHash: write.passwordHash,
        failedPasswordAttempts: 0,
        ...(write.changeRequired === undefined ? {} : { passwordChangeRequired: write.changeRequired }),
        ...(write.activate ? { state: "active" as const } : {}),
      };
      const previous = write.previousHash === undefined ? undefined : write.previousHash === null ? isNull(users.passwordHash) : eq(users.passwordHash, write.previousHash);
      if (changed(await tx.update(users).set(set).where(and(eq(users.id, write.id), previous))) === 0) {
        throw conditionFailed("the user is gone or its password was changed concurrently");
      }
      return;
    }
    case "user.importUpdate": {
      if (write.checkedMemberships !== undefined) {
        const current = await tx.select({ id: memberships.id, roles: memberships.roles }).from(memberships).where(eq(memberships.userId, write.id));
        if (membershipFingerprint(current) !== write.checkedMemberships) throw conditionFailed("the user's roles changed while it was re-imported");
      }
      if (changed(await tx.update(users).set(importedUserSet(write)).where(and(eq(users.id, write.id), eq(users.type, "human")))) === 0) {
        throw conditionFailed("the user is gone");
      }
      return;
    }
    case "user.passwordChecked": {
      const usable = and(eq(users.id, write.id), eq(users.locked, false), eq(users.inactive, false), sameHash(write.verifiedHash));
      if (changed(await tx.update(users).set({ failedPasswordAttempts: 0 }).where(usable)) === 0) {
        throw conditionFailed("the user is gone, locked, deactivated or has another password");
      }
      return;
    }
    case "user.passwordFailed": {
      const unchanged = and(eq(users.id, write.id), eq(users.locked, false), eq(users.failedPasswordAttempts, write.attempts), sameHash(write.verifiedHash));
      const set = { failedPasswordAttempts: write.attempts + 1, ...(write.lock ? { locked: true } : {}) };
      if (changed(await tx.update(users).set(set).where(unchanged)) === 0) throw conditionFailed("the user is gone, locked, or its count or password changed concurrently");
      return;
    }
    case "user.delete": {
      const left = await countOf(tx.select({ n: count() }).from(memberships).where(eq(memberships.userId, write.id)));
      if (left > 0) throw conditionFailed("the user got a membership concurrently");
      if (changed(await tx.delete(users).where(eq(users.id, write.id))) === 0) throw conditionFailed("the user is gone");
      return;
    }
    case "token.deleteOfUser":
      await tx.delete(personalAccessTokens).where(eq(personalAccessTokens.userId, write.userId));
      return;
    case "code.deleteOfUser":
      await tx.delete(oneTimeCodes).where(eq(oneTimeCodes.userId, write.userId));
      return;
    case "userIdpLink.deleteOfUser":
      await tx.delete(userIdpLinks).where(eq(userIdpLinks.userId, write.userId));
      return;
    case "outbox.deleteOfUser":
      await tx.delete(outbox).where(eq(outbox.userId, write.userId));
      return;
    case "userIdpLink.insert": {
      // The link column has no foreign key; this keeps a link from naming an IDP removed since it was checked.
      const [idp] = await tx.select({ id: identityProviders.id }).from(identityProviders).where(eq(identityProviders.id, write.row.idpId));
      if (!idp) throw failedPrecondition("idp.not_found", "the identity provider was removed", { configId: write.row.idpId });
      await tx.insert(userIdpLinks).values(write.row);
      return;
    }
    case "code.replace":
      // One pending code per user and kind: the new one voids the old.
      await tx.delete(oneTimeCodes).where(and(eq(oneTimeCodes.userId, write.row.userId), eq(oneTimeCodes.kind, write.row.kind)));
      await tx.insert(oneTimeCodes).values(write.row);
      return;
    case "code.void":
      await tx.delete(oneTimeCodes).where(and(eq(oneTimeCodes.userId, write.userId), eq(oneTimeCodes.kind, write.codeKind)));
      return;
    case "code.claimAttempt": {
      const claimed = await tx
        .update(oneTimeCodes)
        .set({ attempts: sql`${oneTimeCodes.attempts} + 1` })
        .where(and(eq(oneTimeCodes.id, write.id), isNull(oneTimeCodes.usedAt), lt(oneTimeCodes.attempts, write.max)));
      if (changed(claimed) === 0) throw conditionFailed("the code is used up or void");
      return;
    }
    case "code.use":
      await tx.update(oneTimeCodes).set({ usedAt: write.at }).where(eq(oneTimeCodes.id, write.id));
      return;
    case "outbox.insert":
      await tx.insert(outbox).values({ ...write.row, userId: write.row.userId ?? null });
      return;
    case "passwordPolicy.insert":
      await tx.insert(passwordPolicies).values(write.row);
      return;
    case "lockoutPolicy.put":
      await tx.insert(lockoutPolicies).values(write.row).onConflictDoUpdate({ target: lockoutPolicies.instanceId, set: { maxPasswordAttempts: write.row.maxPasswordAttempts } });
      return;
    case "smtp.insert":
      await tx.insert(smtpConfigs).values(write.row);
      return;
    case "smtp.update":
      await tx
        .update(smtpConfigs)
        .set({ ...write.settings, ...(write.dropPassword ? { passwordSealed: null } : {}) })
        .where(eq(smtpConfigs.instanceId, write.instanceId));
      return;
    case "smtp.setPassword":
      await tx.update(smtpConfigs).set({ passwordSealed: write.passwordSealed }).where(eq(smtpConfigs.instanceId, write.instanceId));
      return;
    case "smtp.delete":
      await tx.delete(smtpConfigs).where(eq(smtpConfigs.instanceId, write.instanceId));
      return;
    case "outbox.sent":
      requireClaim(write, changed(await tx.update(outbox).set({ status: "sent", attempts: write.attempts }).where(claimedBy(write))));
      return;
    case "outbox.retry":
      requireClaim(
        write,
        changed(await tx.update(outbox).set({ attempts: write.attempts, nextAttemptAt: write.nextAttemptAt, claimedBy: null, claimedUntil: null }).where(claimedBy(write))),
      );
      return;
    case "outbox.failed":
      requireClaim(write, changed(await tx.update(outbox).set({ status: "failed", attempts: write.attempts }).where(claimedBy(write))));
      return;
    case "outbox.copied":
      // A copied message is parked (pending, for an SMTP server): its claim ends with the copy, as a retry's does.
      await tx.update(outbox).set({ copiedAt: write.at, claimedBy: null, claimedUntil: null }).where(eq(outbox.id, write.id));
      return;
    default:
      // A write the store does not know must fail the commit, never be skipped silently.
      throw new Error(`unknown row write ${JSON.stringify((write as { kind?: unknown }).kind)}`);
  }
}

/** A grant holds only role keys its project defines at commit time (a RemoveProjectRole may have won a race). */
async function requireRoleKeys(tx: PostgresTx, projectId: string, roleKeys: string[]): Promise<void> {
  const defined = await countOf(tx.select({ n: count() }).from(projectRoles).where(and(eq(projectRoles.projectId, projectId), inArray(projectRoles.roleKey, roleKeys))));
  if (defined < new Set(roleKeys).size) throw conditionFailed("a role key was removed from the project concurrently");
}

/** Whether a role, grant, project membership or application still names the project (see sqlite-writes.ts). */
async function projectStillReferenced(tx: PostgresTx, projectId: string): Promise<boolean> {
  const one = (table: typeof projectRoles | typeof projectGrants | typeof applications) => countOf(tx.select({ n: count() }).from(table).where(eq(table.projectId, projectId)));
  const members = await countOf(tx.select({ n: count() }).from(memberships).where(and(eq(memberships.level, "project"), eq(memberships.scopeId, projectId))));
  return (await one(projectRoles)) + (await one(projectGrants)) + (await one(applications)) + members > 0;
}

/** A project or grant membership may only be added while its scope exists (see sqlite-writes.ts). */
async function requireMembershipScope(tx: PostgresTx, row: { level: string; scopeId: string }): Promise<void> {
  if (row.level === "project" && (await tx.select({ id: projects.id }).from(projects).where(eq(projects.id, row.scopeId))).length === 0) {
    throw notFound("project.not_found", "the project was removed", { projectId: row.scopeId });
  }
  if (row.level === "project_grant" && (await tx.select({ id: projectGrants.id }).from(projectGrants).where(eq(projectGrants.id, row.scopeId))).length === 0) {
    throw notFound("project.grant.not_found", "the project grant was removed", { grantId: row.scopeId });
  }
}

/** Fails unless another membership of the same scope still holds `role` after `membershipId` goes. */
async function requireOtherRoleHolder(tx: PostgresTx, membershipId: string, role: string): Promise<void> {
  const [membership] = await tx.select().from(memberships).where(eq(memberships.id, membershipId));
  if (!membership || !membership.roles.includes(role)) return;
  const others = await countOf(
    tx
      .select({ n: count() })
      .from(memberships)
      .where(and(eq(memberships.level, membership.level), eq(memberships.scopeId, membership.scopeId), ne(memberships.id, membershipId), holdsRole(role))),
  );
  if (others === 0) throw conditionFailed(`the last holder of ${role} would be removed`);
}

async function tokenFingerprintOf(tx: PostgresTx, userId: string): Promise<string> {
  const tokens = await tx.select({ id: personalAccessTokens.id, issuerUserId: personalAccessTokens.issuerUserId }).from(personalAccessTokens).where(eq(personalAccessTokens.userId, userId));
  return tokenFingerprint(userId, tokens);
}

export { holdsRole };
