import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { StoredEvent } from "../events/event.js";
import { toDomainError } from "./db-errors.js";
import { openSqlite, type SqliteOptions } from "./db.js";
import {
  applications,
  identityProviders,
  instances,
  memberships,
  organizations,
  personalAccessTokens,
  projectGrants,
  projectRoles,
  projects,
  users,
} from "./schema/index.js";
import { createSqliteEventLog } from "./sqlite-events.js";
import type { Commit, RowWrite, Store } from "./store.js";

/**
 * The embedded default backend. better-sqlite3 is synchronous, so a commit is one short synchronous
 * transaction (BEGIN IMMEDIATE … COMMIT) with no await inside; slow work happens before it.
 */
export function createSqliteStore(options: SqliteOptions): Store {
  const { sqlite, db } = openSqlite(options);
  const eventLog = createSqliteEventLog(db);

  const applyWrite = (write: RowWrite): void => {
    switch (write.kind) {
      case "instance.insert":
        db.insert(instances).values(write.row).run();
        return;
      case "organization.insert":
        db.insert(organizations).values(write.row).run();
        return;
      case "user.insert":
        db.insert(users).values(write.row).run();
        return;
      case "token.insert":
        db.insert(personalAccessTokens).values(write.row).run();
        return;
      case "membership.insert":
        db.insert(memberships).values(write.row).run();
        return;
      case "membership.delete":
        db.delete(memberships).where(eq(memberships.id, write.id)).run();
        return;
      case "project.insert":
        db.insert(projects).values(write.row).run();
        return;
      case "projectRole.insert":
        db.insert(projectRoles).values(write.row).run();
        return;
      case "projectGrant.insert":
        db.insert(projectGrants).values(write.row).run();
        return;
      case "application.insert":
        db.insert(applications).values(write.row).run();
        return;
      case "application.rename":
        db.update(applications).set({ name: write.name, nameKey: write.nameKey }).where(eq(applications.id, write.id)).run();
        return;
      case "identityProvider.insert":
        db.insert(identityProviders).values(write.row).run();
        return;
      case "identityProvider.replace":
        db.update(identityProviders).set(write.fields).where(eq(identityProviders.id, write.id)).run();
        return;
    }
  };

  const commitTransaction = sqlite.transaction((commit: Commit): StoredEvent[] => {
    for (const write of commit.writes) applyWrite(write);
    const context = { instanceId: commit.instanceId, actor: commit.actor, at: commit.at };
    return commit.events.map((event) => eventLog.append(event, context));
  });

  // Hot reads (every authenticated call) are prepared once.
  const tokenById = db.select().from(personalAccessTokens).where(eq(personalAccessTokens.id, sql.placeholder("id"))).prepare();
  const userById = db.select().from(users).where(eq(users.id, sql.placeholder("id"))).prepare();
  const membershipsOfUser = db.select().from(memberships).where(eq(memberships.userId, sql.placeholder("userId"))).prepare();
  const orgById = db.select().from(organizations).where(eq(organizations.id, sql.placeholder("id"))).prepare();

  return {
    async commit(commit) {
      try {
        return commitTransaction.immediate(commit);
      } catch (error) {
        throw toDomainError(error);
      }
    },
    async getInstance() {
      return db.select().from(instances).limit(1).get();
    },
    async findOrganizationById(id) {
      return orgById.get({ id });
    },
    async findUserById(id) {
      return userById.get({ id });
    },
    async findTokenById(id) {
      return tokenById.get({ id });
    },
    async listMembershipsOfUser(userId) {
      return membershipsOfUser.all({ userId });
    },
    async findMembership(userId, level, scopeId) {
      return db
        .select()
        .from(memberships)
        .where(and(eq(memberships.userId, userId), eq(memberships.level, level), eq(memberships.scopeId, scopeId)))
        .get();
    },
    async listMembershipsOfScope(level, scopeId) {
      return db
        .select()
        .from(memberships)
        .where(and(eq(memberships.level, level), eq(memberships.scopeId, scopeId)))
        .orderBy(asc(sql`rowid`))
        .all();
    },
    async findProjectById(id) {
      return db.select().from(projects).where(eq(projects.id, id)).get();
    },
    async listProjectRoles(projectId) {
      return db.select().from(projectRoles).where(eq(projectRoles.projectId, projectId)).orderBy(asc(sql`rowid`)).all();
    },
    async findProjectGrantById(id) {
      return db.select().from(projectGrants).where(eq(projectGrants.id, id)).get();
    },
    async findApplicationById(id) {
      return db.select().from(applications).where(eq(applications.id, id)).get();
    },
    async listApplicationsOfProject(projectId) {
      return db.select().from(applications).where(eq(applications.projectId, projectId)).orderBy(asc(sql`rowid`)).all();
    },
    async findIdentityProviderById(id) {
      return db.select().from(identityProviders).where(eq(identityProviders.id, id)).get();
    },
    async listIdentityProvidersOf(ownerIds) {
      return db.select().from(identityProviders).where(inArray(identityProviders.ownerId, ownerIds)).orderBy(asc(sql`rowid`)).all();
    },
    async listEvents(filter) {
      return eventLog.list(filter);
    },
    async countEvents(filter) {
      return eventLog.count(filter);
    },
    async aggregateSpan(aggregateType, aggregateId) {
      return eventLog.span(aggregateType, aggregateId);
    },
    async close() {
      if (sqlite.open) sqlite.close();
    },
  };
}
