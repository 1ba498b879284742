import type Database from "better-sqlite3";
import type { StoredEvent } from "../../events/event.js";
import { DomainError } from "../../domain/errors.js";
import { toDomainError } from "./sqlite-errors.js";
import { databaseFile, type GatehouseDb, openLogSync, type SqliteOptions, syncsLog } from "./db.js";
import { createGroupSync } from "./group-commit.js";
import { createCommitBatches } from "./commit-batches.js";
import { createReadWindows } from "./read-window.js";
import { and, eq, getTableColumns, sql } from "drizzle-orm";
import { masterKeyProbe, outbox } from "./schema/index.js";
import type { createSqliteEventLog } from "./sqlite-events.js";
import { createSqliteWrites } from "./sqlite-writes.js";
import { recordCleanClose } from "./sqlite-file.js";
import { existsSync } from "node:fs";
import type { OutboxClaim, Store } from "../store.js";
import { createAccessVersions } from "../access-versions.js";
import { checkExpectation, type Commit } from "../commit.js";

/**
 * The write side of the SQLite store: commits (synchronous, no await inside, in the one transaction that the commits of
 * their turn of the event loop share: commit-batches.ts), their durability (the log's sync shared too:
 * group-commit.ts), and the access version that cached principals are checked against.
 */
export function createSqliteCommits(
  sqlite: Database.Database,
  db: GatehouseDb,
  eventLog: ReturnType<typeof createSqliteEventLog>,
  options: SqliteOptions,
): Pick<Store, "commit" | "durable" | "accessVersion" | "setMasterKeyProbe" | "claimDueOutbox" | "releaseOutboxClaims" | "pruneFinishedOutbox" | "close"> & { enterReads(): void } {
  const file = databaseFile(sqlite);
  const log = syncsLog(options.synchronous) ? openLogSync(sqlite) : undefined;
  const applyWrite = createSqliteWrites(db);
  // Run by the turn's batch (commit-batches.ts), in its transaction or a savepoint of it: it rolls back alone when it throws.
  const applyCommit = (commit: Commit): StoredEvent[] => {
    // Before any write, in the batch's transaction (BEGIN IMMEDIATE: no other writer between this read and the commit).
    if (commit.expect) checkExpectation(commit.expect, eventLog.span(commit.expect.aggregateType, commit.expect.aggregateId)?.last.sequence ?? 0);
    for (const write of commit.writes) applyWrite(write);
    const context = { instanceId: commit.instanceId, actor: commit.actor, at: commit.at };
    return commit.events.map((event) => eventLog.append(event, context));
  };
  // FULL and EXTRA: SQLite commits without syncing (db.ts) and the log is synced here, shared by the commits
  // applied meanwhile (group commit); an acknowledged write is on disk either way.
  const groupSync =
    log &&
    createGroupSync(() => (options.syncLog ? options.syncLog(log.sync) : log.sync()), { onSync: options.onSync, onFailure: options.onSyncFailure });
  // This process's commits are counted here; a commit by another connection (`gatehouse recover-admin` works beside a
  // running server) is seen when a read window opens (read-window.ts), which counts it too, so it drops cached
  // principals as well; and since it is visible here before that process synced it, the next barrier syncs the log for
  // it (one sync flushes the whole file).
  const accessVersions = createAccessVersions();
  /** Set when a batch was lost: calls still running may have read its rows, so nothing is answered any more. */
  let lostBatch: DomainError | undefined;
  let closing = false;
  /** Throws when no write may be applied: after a failed sync or a lost batch, and once the store is closing. */
  const refuseIfFailed = () => {
    groupSync?.refuseIfFailed();
    if (lostBatch) throw lostBatch;
    if (closing) throw new DomainError("unavailable", "store.closing", "the server is stopping");
  };
  const windows = createReadWindows(sqlite, () => groupSync?.noteCommit());
  const batches = createCommitBatches(sqlite, {
    // The batch's snapshot is the newest: it may show other connections' commits, which the next sync must cover and
    // cached principals must not outlive (no read window is opened inside a batch, so none would note them).
    opened: windows.noteOtherCommits,
    // Its sync starts at once, so that a close waiting for the syncs in flight (groupSync.idle) waits for it too.
    committed: (commits) => {
      groupSync?.noteCommit(commits);
      groupSync?.durable().catch(() => {});
    },
    // Like a failed sync: fatal. The members and every later barrier and write get `unavailable`; the process stops.
    lost: (error) => {
      lostBatch ??= new DomainError("unavailable", "store.batch_lost", "a batch of writes could not be committed; the server must restart");
      options.onBatchLost?.(error);
      return lostBatch;
    },
  });
  /** The store's own writes (one statement each, not a command's commit): in the turn's batch like the commits. */
  const upkeep = <T>(statement: () => T) => {
    refuseIfFailed();
    windows.close();
    return batches.apply(statement);
  };
  // The migrations just applied were written without a sync: the first barrier makes them durable.
  groupSync?.noteCommit();

  return {
    async commit(commit) {
      refuseIfFailed();
      // A write cannot run inside the open read snapshot (it would become a nested savepoint on a stale snapshot).
      windows.close();
      let applied: { result: StoredEvent[]; committed: Promise<void> };
      try {
        applied = batches.apply(() => applyCommit(commit));
      } catch (error) {
        // A refusal (a conflict, a stale expectation) may come from another process's commit that is not synced yet:
        // the answer waits for it like any other (the durability barrier), so note it.
        windows.noteOtherCommits();
        // A commit that made SQLite roll the whole batch back fails as the batch's other members do.
        throw lostBatch ?? toDomainError(error);
      }
      // Applied, so visible to this connection's reads: cached principals go now, not once the commit is durable.
      accessVersions.note(commit);
      await applied.committed;
      await groupSync?.durable();
      return applied.result;
    },
    // Every answer waits here (the durability barrier): without an open batch no await of its own, only the sync's
    // promise (resolved at once when no commit waits for one).
    durable() {
      if (lostBatch) return Promise.reject(lostBatch);
      const durable = () => groupSync?.durable() ?? RESOLVED;
      return batches.committed()?.then(durable) ?? durable();
    },
    // In-process: this process's count and the other connections' commits seen by the read window the principal is
    // read in (opened here if none is), no query per call (a resolved promise).
    async accessVersion(userId?: string) {
      windows.enter();
      return `${accessVersions.of(userId)}.${String(windows.otherCommitsSeen())}`;
    },
    enterReads: windows.enter,
    async setMasterKeyProbe(sealed) {
      await upkeep(() => db.insert(masterKeyProbe).values({ id: 1, sealed }).onConflictDoNothing().run()).committed;
      await groupSync?.durable();
    },
    async claimDueOutbox(claim) {
      // Not awaited: a claim lost to a power cut is only claimed again; the worker waits for durability before it sends.
      const claimed = upkeep(() =>
        db
          .update(outbox)
          .set({ claimedBy: claim.owner, claimedUntil: claim.now + claim.leaseMs })
          .where(sql`rowid IN (${claimableOutbox(claim)})`)
          .returning({ ...getTableColumns(outbox), position: sql<number>`rowid` })
          .all(),
      ).result;
      return claimed.sort((a, b) => a.position - b.position).map(({ position: _position, ...row }) => row);
    },
    async releaseOutboxClaims(owner) {
      upkeep(() =>
        db
          .update(outbox)
          .set({ claimedBy: null, claimedUntil: null })
          .where(and(eq(outbox.claimedBy, owner), eq(outbox.status, "pending")))
          .run(),
      );
    },
    async pruneFinishedOutbox(filter) {
      // Not awaited: a deletion lost to a power cut is only made again by the next sweep.
      return upkeep(() =>
        db
          .delete(outbox)
          .where(sql`rowid IN (SELECT rowid FROM outbox WHERE status IN ('sent', 'failed') AND created_at < ${filter.queuedBefore} ORDER BY status, created_at LIMIT ${filter.limit})`)
          .run(),
      ).result.changes;
    },
    async close() {
      // A sync in flight finishes first; after a failed sync or a lost batch the database is left as it is on disk (no
      // closing checkpoint from the page cache): the process stops and the next start recovers the log. An open batch
      // commits first (no new one opens), and its sync starts with it.
      closing = true;
      const failed = () => groupSync?.failed() || lostBatch !== undefined;
      if (!failed()) batches.end();
      await groupSync?.idle();
      windows.close();
      if (failed()) return;
      try {
        sqlite.close();
      } finally {
        log?.close();
      }
      // The last connection closed the file cleanly (its log checkpointed in and removed) and its pages were read in
      // this run: the next start need not read them before it answers (open-database.ts). Best effort: without the
      // marker (a full disk, something else under its name) the next start only reads them first.
      if (!existsSync(`${file}-wal`) && (options.pagesChecked?.() ?? true)) {
        try {
          recordCleanClose(file);
        } catch {
          // Nothing to undo: no marker (or a half-written one under another name, which vouches for nothing).
        }
      }
    },
  };
}

/**
 * What `durable()` answers when the store syncs no log itself (synchronous OFF or NORMAL): one settled promise for
 * every call.
 */
const RESOLVED = Promise.resolve();

/** A message row `alias` still queued for delivery: pending, and not parked as copied when the claim skips those. */
const queued = (alias: string, claim: OutboxClaim) =>
  claim.skipCopied ? sql`${sql.raw(alias)}.status = 'pending' AND ${sql.raw(alias)}.copied_at IS NULL` : sql`${sql.raw(alias)}.status = 'pending'`;

/** A message row `alias` that `owner` may claim at `now` (see `Store.claimDueOutbox`), status aside. */
const heldByNobodyElse = (alias: string, claim: OutboxClaim) =>
  sql`${sql.raw(alias)}.next_attempt_at <= ${claim.now} AND (${sql.raw(alias)}.claimed_until IS NULL OR ${sql.raw(alias)}.claimed_until <= ${claim.now} OR ${sql.raw(alias)}.claimed_by = ${claim.owner})`;

/**
 * The rowids of the messages a claim takes: pending, due, held by nobody else, with no older pending message of the
 * same user that is not (its user's queue stops at the first one that is not yet due or held by another worker), the
 * oldest first, at most `limit`. A user's claimable messages are a prefix of its queue and older ones sort first, so
 * the limit never takes a message without the older ones of its user. One statement (one process per data dir).
 */
function claimableOutbox(claim: OutboxClaim) {
  return sql`SELECT m.rowid FROM outbox m WHERE ${queued("m", claim)} AND ${heldByNobodyElse("m", claim)} AND NOT EXISTS (
    SELECT 1 FROM outbox o WHERE o.user_id = m.user_id AND ${queued("o", claim)} AND o.rowid < m.rowid AND NOT (${heldByNobodyElse("o", claim)})
  ) ORDER BY m.rowid LIMIT ${claim.limit}`;
}
