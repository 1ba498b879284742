import { and, asc, count, eq, gt, inArray, lte, ne, sql } from "drizzle-orm";
import { openSqlite, type SqliteOptions } from "./db.js";
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
import { preparedSelect } from "./prepared-select.js";
import { createSqliteCommits } from "./sqlite-commits.js";
import { insideReadWindows } from "./read-window.js";
import { createSqliteEventLog } from "./sqlite-events.js";
import type { ApplicationFilter, ProjectFilter, Store, UserFilter } from "../store.js";

function applicationConditions(filter: ApplicationFilter) {
  return and(eq(applications.projectId, filter.projectId), filter.state !== undefined ? eq(applications.state, filter.state) : undefined);
}

function projectConditions(filter: ProjectFilter) {
  return and(
    eq(projects.orgId, filter.orgId),
    filter.nameContains !== undefined ? sql`instr(${projects.nameKey}, ${filter.nameContains}) > 0` : undefined,
    filter.state !== undefined ? eq(projects.state, filter.state) : undefined,
    filter.ids !== undefined ? inArray(projects.id, filter.ids) : undefined,
  );
}

function userConditions(filter: UserFilter) {
  const byKey = filter.userNameKey !== undefined || filter.emailKey !== undefined;
  return and(
    // The instance too: the user-name and email filters are served by the instance-wide indexes of those keys.
    eq(users.instanceId, filter.instanceId),
    // With a key, `+org_id` (SQLite's way to keep a term from choosing an index): without statistics the planner would
    // rather walk the whole organization along users_org, in page order, than read the key's few users and sort them.
    byKey ? sql`+${users.orgId} = ${filter.orgId}` : eq(users.orgId, filter.orgId),
    filter.userNameKey !== undefined ? eq(users.userNameKey, filter.userNameKey) : undefined,
    filter.emailKey !== undefined ? eq(users.emailKey, filter.emailKey) : undefined,
  );
}

/** Name filter: the lower-cased key contains the lower-cased text (instr, so `%` and `_` are plain characters). */
function organizationConditions(filter: Parameters<Store["countOrganizations"]>[0]) {
  return and(
    eq(organizations.instanceId, filter.instanceId),
    filter.nameContains !== undefined ? sql`instr(${organizations.nameKey}, ${filter.nameContains}) > 0` : undefined,
    filter.state !== undefined ? eq(organizations.state, filter.state) : undefined,
  );
}

/**
 * The embedded default backend: the reads here (hot ones prepared once), the commits and their durability in
 * sqlite-commits.ts. better-sqlite3 is synchronous, so slow work happens before a commit, never inside it.
 */
export function createSqliteStore(options: SqliteOptions): Store {
  const { sqlite, db } = openSqlite(options);
  const eventLog = createSqliteEventLog(db);
  const commits = createSqliteCommits(sqlite, db, eventLog, options);

  // Hot reads (every authenticated call, and the look-ups of the common calls: an organization, a project, its roles, a
  // grant, an application, a user's code, the policy) are compiled once, their rows mapped without drizzle's generic
  // mapping (prepared-select.ts).
  const tokenById = preparedSelect(sqlite, personalAccessTokens, [personalAccessTokens.id]);
  const userById = preparedSelect(sqlite, users, [users.id]);
  // Every VerifyPassword by login name.
  const userByNameKey = preparedSelect(sqlite, users, [users.instanceId, users.userNameKey]);
  const membershipsOfUser = preparedSelect(sqlite, memberships, [memberships.userId]);
  // Every grant of a role reads the member's tokens (revokeTokensBeyondIssuer) and whether it is a member already.
  const tokensOfUser = preparedSelect(sqlite, personalAccessTokens, [personalAccessTokens.userId], [personalAccessTokens.createdAt, "rowid"]);
  const membershipOfUserIn = preparedSelect(sqlite, memberships, [memberships.userId, memberships.level, memberships.scopeId]);
  const orgById = preparedSelect(sqlite, organizations, [organizations.id]);
  const projectById = preparedSelect(sqlite, projects, [projects.id]);
  const rolesOfProject = preparedSelect(sqlite, projectRoles, [projectRoles.projectId], ["rowid"]);
  const grantById = preparedSelect(sqlite, projectGrants, [projectGrants.id]);
  const applicationById = preparedSelect(sqlite, applications, [applications.id]);
  const codeOfUser = preparedSelect(sqlite, oneTimeCodes, [oneTimeCodes.userId, oneTimeCodes.kind]);
  const policyOfInstance = preparedSelect(sqlite, passwordPolicies, [passwordPolicies.instanceId]);
  // Polled by the delivery worker, so prepared too.
  const dueOutbox = db
    .select()
    .from(outbox)
    .where(and(eq(outbox.status, "pending"), lte(outbox.nextAttemptAt, sql.placeholder("now"))))
    .orderBy(asc(outbox.nextAttemptAt), asc(sql`rowid`))
    .limit(sql.placeholder("limit"))
    .prepare();

  const { enterReads, ...writeSide } = commits;
  // Every read runs in the read window of its turn of the event loop (read-window.ts): one snapshot, one set of locks.
  const reads: Omit<Store, keyof typeof writeSide> = {
    async getInstance() {
      return db.select().from(instances).limit(1).get();
    },
    async findOrganizationById(id) {
      return orgById.get(id);
    },
    async listOrganizationsPage(filter) {
      const after = filter.afterPosition !== undefined ? gt(sql`${organizations}.rowid`, filter.afterPosition) : undefined;
      return db
        .select({ row: organizations, position: sql<number>`${organizations}.rowid` })
        .from(organizations)
        .where(and(organizationConditions(filter), after))
        .orderBy(asc(sql`${organizations}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countOrganizations(filter) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(organizations).where(organizationConditions(filter)).get()?.n ?? 0;
    },
    async findUserById(id) {
      return userById.get(id);
    },
    async findUserByUserNameKey(instanceId, userNameKey) {
      return userByNameKey.get(instanceId, userNameKey);
    },
    async findUsersByNameKeysOrExternalIds(filter) {
      // Two look-ups, each on its unique index (one query with OR scans the whole table). The keys go in as one JSON
      // array (json_each), so the statement is the same for every chunk, whatever its size: compiled once, not per call.
      const named = filter.userNameKeys.length > 0 ? db.select().from(users).where(and(eq(users.instanceId, filter.instanceId), sql`${users.userNameKey} IN (SELECT value FROM json_each(${JSON.stringify(filter.userNameKeys)}))`)).all() : [];
      const identified = filter.externalIds.length > 0 ? db.select().from(users).where(and(eq(users.orgId, filter.orgId), sql`${users.externalId} IN (SELECT value FROM json_each(${JSON.stringify(filter.externalIds)}))`)).all() : [];
      return [...new Map([...named, ...identified].map((user) => [user.id, user])).values()];
    },
    async findTokenById(id) {
      return tokenById.get(id);
    },
    async getMasterKeyProbe() {
      return db.select().from(masterKeyProbe).where(eq(masterKeyProbe.id, 1)).get()?.sealed;
    },
    async listTokensPage(filter) {
      return db
        .select({ row: personalAccessTokens, position: sql<number>`${personalAccessTokens}.rowid` })
        .from(personalAccessTokens)
        .where(
          and(
            eq(personalAccessTokens.userId, filter.userId),
            filter.afterPosition !== undefined ? gt(sql`${personalAccessTokens}.rowid`, filter.afterPosition) : undefined,
          ),
        )
        .orderBy(asc(sql`${personalAccessTokens}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countTokensOfUser(userId) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(personalAccessTokens).where(eq(personalAccessTokens.userId, userId)).get()?.n ?? 0;
    },
    async listTokensOfUser(userId) {
      return tokensOfUser.all(userId);
    },
    async listMembershipsOfUser(userId) {
      return membershipsOfUser.all(userId);
    },
    async findMembership(userId, level, scopeId) {
      return membershipOfUserIn.get(userId, level, scopeId);
    },
    async listMembershipsOfScope(level, scopeId) {
      return db
        .select()
        .from(memberships)
        .where(and(eq(memberships.level, level), eq(memberships.scopeId, scopeId)))
        .orderBy(asc(sql`rowid`))
        .all();
    },
    async listMembershipsOfScopePage(filter) {
      const after = filter.afterPosition !== undefined ? gt(sql`${memberships}.rowid`, filter.afterPosition) : undefined;
      return db
        .select({ row: memberships, position: sql<number>`${memberships}.rowid` })
        .from(memberships)
        .where(and(eq(memberships.level, filter.level), eq(memberships.scopeId, filter.scopeId), after))
        .orderBy(asc(sql`${memberships}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countMembershipsOfScope(level, scopeId) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(memberships).where(and(eq(memberships.level, level), eq(memberships.scopeId, scopeId))).get()?.n ?? 0;
    },
    async countRoleHolders(level, scopeId, role, exceptId) {
      const holdsRole = sql`EXISTS (SELECT 1 FROM json_each(${memberships.roles}) WHERE json_each.value = ${role})`;
      const where = and(eq(memberships.level, level), eq(memberships.scopeId, scopeId), ne(memberships.id, exceptId), holdsRole);
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(memberships).where(where).get()?.n ?? 0;
    },
    async findProjectById(id) {
      return projectById.get(id);
    },
    async listProjectRoles(projectId) {
      return rolesOfProject.all(projectId);
    },
    async findProjectGrantById(id) {
      return grantById.get(id);
    },
    async listProjectsPage(filter) {
      const after = filter.afterPosition !== undefined ? gt(sql`${projects}.rowid`, filter.afterPosition) : undefined;
      return db
        .select({ row: projects, position: sql<number>`${projects}.rowid` })
        .from(projects)
        .where(and(projectConditions(filter), after))
        .orderBy(asc(sql`${projects}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countProjects(filter) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(projects).where(projectConditions(filter)).get()?.n ?? 0;
    },
    async listProjectRolesPage(filter) {
      const after = filter.afterPosition !== undefined ? gt(sql`${projectRoles}.rowid`, filter.afterPosition) : undefined;
      return db
        .select({ row: projectRoles, position: sql<number>`${projectRoles}.rowid` })
        .from(projectRoles)
        .where(and(eq(projectRoles.projectId, filter.projectId), after))
        .orderBy(asc(sql`${projectRoles}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countProjectRoles(projectId) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(projectRoles).where(eq(projectRoles.projectId, projectId)).get()?.n ?? 0;
    },
    async listProjectGrantsOfProject(projectId) {
      return db.select().from(projectGrants).where(eq(projectGrants.projectId, projectId)).orderBy(asc(sql`rowid`)).all();
    },
    async listProjectGrantsPage(filter) {
      const after = filter.afterPosition !== undefined ? gt(sql`${projectGrants}.rowid`, filter.afterPosition) : undefined;
      return db
        .select({ row: projectGrants, position: sql<number>`${projectGrants}.rowid` })
        .from(projectGrants)
        .where(and(eq(projectGrants.projectId, filter.projectId), after))
        .orderBy(asc(sql`${projectGrants}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countProjectGrants(projectId) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(projectGrants).where(eq(projectGrants.projectId, projectId)).get()?.n ?? 0;
    },
    async findApplicationById(id) {
      return applicationById.get(id);
    },
    async listApplicationsOfProject(projectId) {
      return db.select().from(applications).where(eq(applications.projectId, projectId)).orderBy(asc(sql`rowid`)).all();
    },
    async findIdentityProviderById(id) {
      return db.select().from(identityProviders).where(eq(identityProviders.id, id)).get();
    },
    async listApplicationsPage(filter) {
      const after = filter.afterPosition !== undefined ? gt(sql`${applications}.rowid`, filter.afterPosition) : undefined;
      return db
        .select({ row: applications, position: sql<number>`${applications}.rowid` })
        .from(applications)
        .where(and(applicationConditions(filter), after))
        .orderBy(asc(sql`${applications}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countApplications(filter) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(applications).where(applicationConditions(filter)).get()?.n ?? 0;
    },
    async listIdentityProvidersPage(filter) {
      const after = filter.afterPosition !== undefined ? gt(sql`${identityProviders}.rowid`, filter.afterPosition) : undefined;
      return db
        .select({ row: identityProviders, position: sql<number>`${identityProviders}.rowid` })
        .from(identityProviders)
        .where(and(inArray(identityProviders.ownerId, filter.ownerIds), after))
        .orderBy(asc(sql`${identityProviders}.rowid`))
        .limit(filter.limit)
        .all();
    },
    async countIdentityProviders(filter) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(identityProviders).where(inArray(identityProviders.ownerId, filter.ownerIds)).get()?.n ?? 0;
    },
    async listIdpLinksOfIdp(idpId) {
      const rows = db
        .select({ link: userIdpLinks, orgId: users.orgId })
        .from(userIdpLinks)
        .innerJoin(users, eq(users.id, userIdpLinks.userId))
        .where(eq(userIdpLinks.idpId, idpId))
        .orderBy(asc(sql`${userIdpLinks}.rowid`))
        .all();
      return rows.map(({ link, orgId }) => ({ ...link, orgId }));
    },
    async listIdpLinksOfUser(userId) {
      return db.select().from(userIdpLinks).where(eq(userIdpLinks.userId, userId)).orderBy(asc(sql`rowid`)).all();
    },
    async findCode(userId, kind) {
      return codeOfUser.get(userId, kind);
    },
    async listUsers(filter) {
      const rows = db
        .select({ row: users, position: sql<number>`${users}.rowid` })
        .from(users)
        .where(and(userConditions(filter), filter.afterPosition !== undefined ? gt(sql`${users}.rowid`, filter.afterPosition) : undefined))
        .orderBy(asc(sql`${users}.rowid`))
        .limit(filter.limit)
        .all();
      return rows;
    },
    async countUsers(filter) {
      // Stryker disable next-line OptionalChaining: a count() query always returns one row
      return db.select({ n: count() }).from(users).where(userConditions(filter)).get()?.n ?? 0;
    },
    async getPasswordPolicy(instanceId) {
      return policyOfInstance.get(instanceId);
    },
    async getLockoutPolicy(instanceId) {
      return db.select().from(lockoutPolicies).where(eq(lockoutPolicies.instanceId, instanceId)).get();
    },
    async listOutbox(filter) {
      return db
        .select()
        .from(outbox)
        .where(filter.status ? eq(outbox.status, filter.status) : undefined)
        .orderBy(asc(sql`rowid`))
        .limit(filter.limit)
        .all();
    },
    async listOutboxOfUser(userId) {
      return db.select().from(outbox).where(eq(outbox.userId, userId)).orderBy(asc(sql`rowid`)).all();
    },
    async listDueOutbox(now, limit) {
      return dueOutbox.all({ now, limit });
    },
    async getSmtpConfig(instanceId) {
      return db.select().from(smtpConfigs).where(eq(smtpConfigs.instanceId, instanceId)).get();
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
  return { ...writeSide, ...insideReadWindows(reads, { enter: enterReads }) };
}
