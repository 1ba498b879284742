import type Database from "better-sqlite3";
import type { StoredEvent } from "../../events/event.js";
import { toDomainError } from "./sqlite-errors.js";
import { type GatehouseDb, openLogSync, type SqliteOptions, syncsLog } from "./db.js";
import { createGroupSync } from "./group-commit.js";
import { createReadWindows } from "./read-window.js";
import { masterKeyProbe } from "./schema/index.js";
import type { createSqliteEventLog } from "./sqlite-events.js";
import { createSqliteWrites } from "./sqlite-writes.js";
import { changesAccess, checkExpectation, type Commit, type Store } from "../store.js";

/**
 * The write side of the SQLite store: commits (one short synchronous transaction each, BEGIN IMMEDIATE … COMMIT,
 * no await inside), their durability (group commit, group-commit.ts), and the access version that cached
 * principals are checked against.
 */
export function createSqliteCommits(
  sqlite: Database.Database,
  db: GatehouseDb,
  eventLog: ReturnType<typeof createSqliteEventLog>,
  options: SqliteOptions,
): Pick<Store, "commit" | "durable" | "accessVersion" | "setMasterKeyProbe" | "close"> & { enterReads(): void } {
  const log = syncsLog(options.synchronous) ? openLogSync(sqlite) : undefined;
  const applyWrite = createSqliteWrites(db);
  const commitTransaction = sqlite.transaction((commit: Commit): StoredEvent[] => {
    // Before any write, in the transaction (BEGIN IMMEDIATE: no other writer between this read and the commit).
    if (commit.expect) checkExpectation(commit.expect, eventLog.span(commit.expect.aggregateType, commit.expect.aggregateId)?.last.sequence ?? 0);
    for (const write of commit.writes) applyWrite(write);
    const context = { instanceId: commit.instanceId, actor: commit.actor, at: commit.at };
    return commit.events.map((event) => eventLog.append(event, context));
  });
  // FULL and EXTRA: SQLite commits without syncing (db.ts) and the log is synced here, shared by the commits
  // applied meanwhile (group commit); an acknowledged write is on disk either way.
  const groupSync =
    log &&
    createGroupSync(() => (options.syncLog ? options.syncLog(log.sync) : log.sync()), { onSync: options.onSync, onFailure: options.onSyncFailure });
  // This process's commits are counted here; a commit by another connection (`gatehouse recover-admin` works beside a
  // running server) is seen when a read window opens (read-window.ts), which counts it too, so it drops cached
  // principals as well; and since it is visible here before that process synced it, the next barrier syncs the log for
  // it (one sync flushes the whole file).
  let accessVersion = 0;
  const windows = createReadWindows(sqlite, () => groupSync?.noteCommit());
  // The migrations just applied were written without a sync: the first barrier makes them durable.
  groupSync?.noteCommit();

  return {
    async commit(commit) {
      groupSync?.refuseIfFailed();
      // A write cannot run inside the open read snapshot (it would become a nested savepoint on a stale snapshot).
      windows.close();
      let stored: StoredEvent[];
      try {
        stored = commitTransaction.immediate(commit);
      } catch (error) {
        // A refusal (a conflict, a stale expectation) may come from another process's commit that is not synced yet:
        // the answer waits for it like any other (the durability barrier), so note it.
        windows.noteOtherCommits();
        throw toDomainError(error);
      }
      groupSync?.noteCommit();
      // Committed, so visible: cached principals go now, not once the commit is durable.
      if (changesAccess(commit)) accessVersion += 1;
      await groupSync?.durable();
      return stored;
    },
    async durable() {
      await groupSync?.durable();
    },
    // In-process: this process's count and the other connections' commits seen by the read window the principal is
    // read in (opened here if none is), no query per call (a resolved promise).
    async accessVersion() {
      windows.enter();
      return `${accessVersion}.${String(windows.otherCommitsSeen())}`;
    },
    enterReads: windows.enter,
    async setMasterKeyProbe(sealed) {
      groupSync?.refuseIfFailed();
      windows.close();
      db.insert(masterKeyProbe).values({ id: 1, sealed }).onConflictDoNothing().run();
      groupSync?.noteCommit();
      await groupSync?.durable();
    },
    async close() {
      // A sync in flight finishes first; after a failed sync the database is left as it is on disk (no closing
      // checkpoint from the page cache): the process stops and the next start recovers the log.
      await groupSync?.idle();
      windows.close();
      if (groupSync?.failed()) return;
      sqlite.close();
      log?.close();
    },
  };
}
