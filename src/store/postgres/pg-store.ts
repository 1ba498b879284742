import { and, asc, count, eq, gt, inArray, lte, ne, sql, type SQL } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { ApplicationFilter, OrganizationFilter, ProjectFilter, Store, UserFilter } from "../store.js";
import { rowColumns } from "./pg-columns.js";
import { createPostgresCommits } from "./pg-commits.js";
import { openPostgres, type PostgresOptions } from "./pg-db.js";
import { createPostgresEventLog } from "./pg-events.js";
import { holdsRole } from "./pg-writes.js";
import {
  applications,
  identityProviders,
  instances,
  lockoutPolicies,
  masterKeyProbe,
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

const columns = {
  organizations: rowColumns(organizations),
  users: rowColumns(users),
  tokens: rowColumns(personalAccessTokens),
  memberships: rowColumns(memberships),
  projects: rowColumns(projects),
  projectRoles: rowColumns(projectRoles),
  projectGrants: rowColumns(projectGrants),
  applications: rowColumns(applications),
  identityProviders: rowColumns(identityProviders),
  userIdpLinks: rowColumns(userIdpLinks),
  outbox: rowColumns(outbox),
};

/** Name filter: the lower-cased key contains the lower-cased text (strpos, so `%` and `_` are plain characters). */
const contains = (column: PgColumn, text: string) => sql`strpos(${column}, ${text}) > 0`;

function applicationConditions(filter: ApplicationFilter) {
  return and(eq(applications.projectId, filter.projectId), filter.state !== undefined ? eq(applications.state, filter.state) : undefined);
}

function projectConditions(filter: ProjectFilter) {
  return and(
    eq(projects.orgId, filter.orgId),
    filter.nameContains !== undefined ? contains(projects.nameKey, filter.nameContains) : undefined,
    filter.state !== undefined ? eq(projects.state, filter.state) : undefined,
    filter.ids !== undefined ? inArray(projects.id, filter.ids) : undefined,
  );
}

function userConditions(filter: UserFilter) {
  return and(
    // The instance first: the user-name and email filters are served by the instance-wide indexes of those keys.
    eq(users.instanceId, filter.instanceId),
    eq(users.orgId, filter.orgId),
    filter.userNameKey !== undefined ? eq(users.userNameKey, filter.userNameKey) : undefined,
    filter.emailKey !== undefined ? eq(users.emailKey, filter.emailKey) : undefined,
  );
}

function organizationConditions(filter: OrganizationFilter) {
  return and(
    eq(organizations.instanceId, filter.instanceId),
    filter.nameContains !== undefined ? contains(organizations.nameKey, filter.nameContains) : undefined,
    filter.state !== undefined ? eq(organizations.state, filter.state) : undefined,
  );
}

/** Rows after a page cursor (a position), or all when there is none. */
const after = (table: PgTable & { position: PgColumn }, position: number | undefined) => (position !== undefined ? gt(table.position, position) : undefined);

/**
 * The PostgreSQL backend: the same contract as the SQLite one, for several Gatehouse processes on one database.
 * Reads run on the pool, outside transactions; commits, their serialization and the access version are in
 * pg-commits.ts. Opens the pool and migrates (under an advisory lock) before it resolves.
 */
export async function createPostgresStore(options: PostgresOptions): Promise<Store> {
  const { pools, db, commitDb } = await openPostgres(options);
  const eventLog = createPostgresEventLog(db);
  const commits = createPostgresCommits(pools, db, commitDb, eventLog);

  const first = async <T>(query: PromiseLike<T[]>): Promise<T | undefined> => (await query)[0];
  const countOf = async (query: PromiseLike<{ n: number }[]>): Promise<number> => (await first(query))?.n ?? 0;
  /** One page of a table's rows in insertion order, after the given position (the row type is the schema's, position left out). */
  const page = async <T extends PgTable & { position: PgColumn }>(table: T, where: SQL | undefined, position: number | undefined, limit: number) => {
    const rows = await db
      .select({ row: rowColumns(table), position: table.position })
      .from(table as PgTable)
      .where(and(where, after(table, position)))
      .orderBy(asc(table.position))
      .limit(limit);
    return rows as unknown as { row: Omit<T["$inferSelect"], "position">; position: number }[];
  };

  return {
    ...commits,
    async getInstance() {
      return first(db.select().from(instances).limit(1));
    },
    async findOrganizationById(id) {
      return first(db.select(columns.organizations).from(organizations).where(eq(organizations.id, id)));
    },
    async listOrganizationsPage(filter) {
      return page(organizations, organizationConditions(filter), filter.afterPosition, filter.limit);
    },
    async countOrganizations(filter) {
      return countOf(db.select({ n: count() }).from(organizations).where(organizationConditions(filter)));
    },
    async findUserById(id) {
      return first(db.select(columns.users).from(users).where(eq(users.id, id)));
    },
    async findUserByUserNameKey(instanceId, userNameKey) {
      return first(db.select(columns.users).from(users).where(and(eq(users.instanceId, instanceId), eq(users.userNameKey, userNameKey))));
    },
    async findUsersByNameKeysOrExternalIds(filter) {
      // Two look-ups, each on its unique index, at once.
      const [named, identified] = await Promise.all([
        filter.userNameKeys.length > 0 ? db.select(columns.users).from(users).where(and(eq(users.instanceId, filter.instanceId), inArray(users.userNameKey, filter.userNameKeys))) : [],
        filter.externalIds.length > 0 ? db.select(columns.users).from(users).where(and(eq(users.orgId, filter.orgId), inArray(users.externalId, filter.externalIds))) : [],
      ]);
      return [...new Map([...named, ...identified].map((user) => [user.id, user])).values()];
    },
    async findTokenById(id) {
      return first(db.select(columns.tokens).from(personalAccessTokens).where(eq(personalAccessTokens.id, id)));
    },
    async getMasterKeyProbe() {
      return (await first(db.select().from(masterKeyProbe).where(eq(masterKeyProbe.id, 1))))?.sealed;
    },
    async listTokensPage(filter) {
      return page(personalAccessTokens, eq(personalAccessTokens.userId, filter.userId), filter.afterPosition, filter.limit);
    },
    async countTokensOfUser(userId) {
      return countOf(db.select({ n: count() }).from(personalAccessTokens).where(eq(personalAccessTokens.userId, userId)));
    },
    async listTokensOfUser(userId) {
      return db
        .select(columns.tokens)
        .from(personalAccessTokens)
        .where(eq(personalAccessTokens.userId, userId))
        .orderBy(asc(personalAccessTokens.createdAt), asc(personalAccessTokens.position));
    },
    async listMembershipsOfUser(userId) {
      return db.select(columns.memberships).from(memberships).where(eq(memberships.userId, userId)).orderBy(asc(memberships.position));
    },
    async findMembership(userId, level, scopeId) {
      return first(
        db
          .select(columns.memberships)
          .from(memberships)
          .where(and(eq(memberships.userId, userId), eq(memberships.level, level), eq(memberships.scopeId, scopeId))),
      );
    },
    async listMembershipsOfScope(level, scopeId) {
      return db
        .select(columns.memberships)
        .from(memberships)
        .where(and(eq(memberships.level, level), eq(memberships.scopeId, scopeId)))
        .orderBy(asc(memberships.position));
    },
    async listMembershipsOfScopePage(filter) {
      return page(memberships, and(eq(memberships.level, filter.level), eq(memberships.scopeId, filter.scopeId)), filter.afterPosition, filter.limit);
    },
    async countMembershipsOfScope(level, scopeId) {
      return countOf(db.select({ n: count() }).from(memberships).where(and(eq(memberships.level, level), eq(memberships.scopeId, scopeId))));
    },
    async countRoleHolders(level, scopeId, role, exceptId) {
      const where = and(eq(memberships.level, level), eq(memberships.scopeId, scopeId), ne(memberships.id, exceptId), holdsRole(role));
      return countOf(db.select({ n: count() }).from(memberships).where(where));
    },
    async findProjectById(id) {
      return first(db.select(columns.projects).from(projects).where(eq(projects.id, id)));
    },
    async listProjectRoles(projectId) {
      return db.select(columns.projectRoles).from(projectRoles).where(eq(projectRoles.projectId, projectId)).orderBy(asc(projectRoles.position));
    },
    async findProjectGrantById(id) {
      return first(db.select(columns.projectGrants).from(projectGrants).where(eq(projectGrants.id, id)));
    },
    async listProjectsPage(filter) {
      return page(projects, projectConditions(filter), filter.afterPosition, filter.limit);
    },
    async countProjects(filter) {
      return countOf(db.select({ n: count() }).from(projects).where(projectConditions(filter)));
    },
    async listProjectRolesPage(filter) {
      return page(projectRoles, eq(projectRoles.projectId, filter.projectId), filter.afterPosition, filter.limit);
    },
    async countProjectRoles(projectId) {
      return countOf(db.select({ n: count() }).from(projectRoles).where(eq(projectRoles.projectId, projectId)));
    },
    async listProjectGrantsOfProject(projectId) {
      return db.select(columns.projectGrants).from(projectGrants).where(eq(projectGrants.projectId, projectId)).orderBy(asc(projectGrants.position));
    },
    async listProjectGrantsPage(filter) {
      return page(projectGrants, eq(projectGrants.projectId, filter.projectId), filter.afterPosition, filter.limit);
    },
    async countProjectGrants(projectId) {
      return countOf(db.select({ n: count() }).from(projectGrants).where(eq(projectGrants.projectId, projectId)));
    },
    async findApplicationById(id) {
      return first(db.select(columns.applications).from(applications).where(eq(applications.id, id)));
    },
    async listApplicationsOfProject(projectId) {
      return db.select(columns.applications).from(applications).where(eq(applications.projectId, projectId)).orderBy(asc(applications.position));
    },
    async findIdentityProviderById(id) {
      return first(db.select(columns.identityProviders).from(identityProviders).where(eq(identityProviders.id, id)));
    },
    async listApplicationsPage(filter) {
      return page(applications, applicationConditions(filter), filter.afterPosition, filter.limit);
    },
    async countApplications(filter) {
      return countOf(db.select({ n: count() }).from(applications).where(applicationConditions(filter)));
    },
    async listIdentityProvidersPage(filter) {
      return page(identityProviders, inArray(identityProviders.ownerId, filter.ownerIds), filter.afterPosition, filter.limit);
    },
    async countIdentityProviders(filter) {
      return countOf(db.select({ n: count() }).from(identityProviders).where(inArray(identityProviders.ownerId, filter.ownerIds)));
    },
    async listIdpLinksOfIdp(idpId) {
      const rows = await db
        .select({ link: columns.userIdpLinks, orgId: users.orgId })
        .from(userIdpLinks)
        .innerJoin(users, eq(users.id, userIdpLinks.userId))
        .where(eq(userIdpLinks.idpId, idpId))
        .orderBy(asc(userIdpLinks.position));
      return rows.map(({ link, orgId }) => ({ ...link, orgId }));
    },
    async listIdpLinksOfUser(userId) {
      return db.select(columns.userIdpLinks).from(userIdpLinks).where(eq(userIdpLinks.userId, userId)).orderBy(asc(userIdpLinks.position));
    },
    async findCode(userId, kind) {
      return first(db.select().from(oneTimeCodes).where(and(eq(oneTimeCodes.userId, userId), eq(oneTimeCodes.kind, kind))));
    },
    async listUsers(filter) {
      return page(users, userConditions(filter), filter.afterPosition, filter.limit);
    },
    async countUsers(filter) {
      return countOf(db.select({ n: count() }).from(users).where(userConditions(filter)));
    },
    async getPasswordPolicy(instanceId) {
      return first(db.select().from(passwordPolicies).where(eq(passwordPolicies.instanceId, instanceId)));
    },
    async getLockoutPolicy(instanceId) {
      return first(db.select().from(lockoutPolicies).where(eq(lockoutPolicies.instanceId, instanceId)));
    },
    async listOutbox(filter) {
      return db
        .select(columns.outbox)
        .from(outbox)
        .where(filter.status ? eq(outbox.status, filter.status) : undefined)
        .orderBy(asc(outbox.position))
        .limit(filter.limit);
    },
    async listOutboxOfUser(userId) {
      return db.select(columns.outbox).from(outbox).where(eq(outbox.userId, userId)).orderBy(asc(outbox.position));
    },
    async listDueOutbox(now, limit) {
      return db
        .select(columns.outbox)
        .from(outbox)
        .where(and(eq(outbox.status, "pending"), lte(outbox.nextAttemptAt, now)))
        .orderBy(asc(outbox.nextAttemptAt), asc(outbox.position))
        .limit(limit);
    },
    async getSmtpConfig(instanceId) {
      return first(db.select().from(smtpConfigs).where(eq(smtpConfigs.instanceId, instanceId)));
    },
    async listEvents(filter) {
      return eventLog.list(filter);
    },
    async countEvents(filter) {
      return eventLog.count(filter);
    },
    async aggregateSpan(aggregateType, aggregateId, createdBy) {
      return eventLog.span(aggregateType, aggregateId, createdBy);
    },
  };
}
