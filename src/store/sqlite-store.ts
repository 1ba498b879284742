import { and, eq, sql } from "drizzle-orm";
import type { StoredEvent } from "../events/event.js";
import { toDomainError } from "./db-errors.js";
import { openSqlite, type SqliteOptions } from "./db.js";
import { instances, memberships, organizations, personalAccessTokens, users } from "./schema/index.js";
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
