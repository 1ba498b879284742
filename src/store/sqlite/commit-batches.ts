import type Database from "better-sqlite3";

/**
 * Group commit, the transaction half (the sync half is group-commit.ts): the commands' commits of one turn of the
 * event loop are applied in one SQLite transaction, each in its own savepoint.
 *
 * The first commit of a turn opens the batch (BEGIN IMMEDIATE) and runs in its transaction; each later one runs in a
 * savepoint of it. Each runs at once, in the same synchronous stretch as the reads its command made, so commands still
 * never interleave between their reads and their writes; a commit that fails rolls back alone (the first one with the
 * transaction, which holds nothing else; a later one to its savepoint) and gets its own error. The batch commits when
 * the turn is over (setImmediate), or when the connection closes. (The store's own upkeep writes — outbox claims,
 * sweeps — are members too, each one statement.) Its members learn of that through `committed`, and are acknowledged
 * only once the log is synced after it (the sync half). One transaction per turn instead of one per commit saves
 * SQLite's per-transaction work (the locks, the log's commit frame, the pages two commits both touch written once).
 *
 * No await happens inside the transaction's own work: it stays open only until the turn ends, never across a wait for
 * the disk, the network or a thread. Reads of the same turn run in it and see its commits, which are not durable yet —
 * as they saw the previous design's commits before their sync: every answer waits for `committed` (through the
 * store's durability barrier), so nothing leaves the process that a lost batch would take back.
 *
 * A batch is lost when SQLite rolls the whole transaction back (an I/O error or a full disk may do that inside a
 * statement) or its COMMIT fails: every member then fails, none is acknowledged. Reads may already have shown its
 * rows to calls still running, so the store treats that like a failed sync: it refuses everything from then on and
 * the process stops (sqlite-commits.ts).
 *
 * An open batch holds SQLite's write lock until its turn ends. Another process waits for it (busy_timeout), but
 * SQLite's busy handler polls, and under a steady write load the lock is free only between a batch's commit and the
 * next turn's first write: a writer beside a busy server (`gatehouse recover-admin`) may run out of its timeout
 * (README). Another connection of this process would wait on this very thread, which cannot end the turn meanwhile —
 * so a batch that opens first ends every other connection's open batch (`endOpenBatches`), and a test that writes
 * through a connection of its own beside an in-process server calls `endOpenBatches` first.
 */
export function createCommitBatches(sqlite: Database.Database, hooks: { opened(): void; committed(commits: number): void; lost(error: unknown): unknown }) {
  const begin = sqlite.prepare("BEGIN IMMEDIATE");
  const commit = sqlite.prepare("COMMIT");
  const rollback = sqlite.prepare("ROLLBACK");
  const savepoint = sqlite.prepare("SAVEPOINT batched_commit");
  const release = sqlite.prepare("RELEASE batched_commit");
  const rollbackTo = sqlite.prepare("ROLLBACK TO batched_commit");
  let open: Batch | undefined;
  const endOpen = () => end(open);

  /** Rolls the transaction back, if one is open; answers whether none is open afterwards. */
  const rolledBack = () => {
    try {
      if (sqlite.inTransaction) rollback.run();
    } catch {
      // Answered below: the transaction is still open.
    }
    return !sqlite.inTransaction;
  };

  /** Every member fails with what `hooks.lost` makes of the error, whatever the rollback or the hook does. */
  const lose = (batch: Batch, error: unknown) => {
    open = undefined;
    openBatches.delete(endOpen);
    rolledBack();
    let reason = error;
    try {
      reason = hooks.lost(error);
    } finally {
      batch.reject(reason);
    }
  };

  const end = (batch: Batch | undefined) => {
    // A batch ended early (or lost) is not ended again by its turn's callback.
    if (batch === undefined || batch !== open) return;
    try {
      commit.run();
    } catch (error) {
      lose(batch, error);
      return;
    }
    open = undefined;
    openBatches.delete(endOpen);
    hooks.committed(batch.commits);
    batch.resolve();
  };

  // The batch's first commit runs without a savepoint: when it fails, the transaction, which holds nothing else, rolls
  // back whole. A savepoint makes SQLite copy every page the commit then changes to its sub-journal first: a bulk
  // import's chunk of 1 000 users, usually alone in its batch, spent a fifth more CPU with one.
  const first = <T>(apply: () => T) => {
    endOpenBatches();
    begin.run();
    const batch = newBatch();
    open = batch;
    openBatches.add(endOpen);
    let result: T;
    try {
      hooks.opened();
      result = apply();
    } catch (error) {
      // Nobody holds the batch yet; only a transaction that cannot be rolled back makes it lost (no write may follow).
      if (rolledBack()) {
        open = undefined;
        openBatches.delete(endOpen);
      } else lose(batch, error);
      throw error;
    }
    batch.commits = 1;
    setImmediate(() => end(batch));
    return { result, committed: batch.done };
  };

  /** Undoes the current savepoint; answers whether it could. */
  const undoSavepoint = () => {
    try {
      rollbackTo.run();
      release.run();
      return true;
    } catch {
      return false;
    }
  };

  const inSavepoint = <T>(batch: Batch, apply: () => T) => {
    savepoint.run();
    try {
      const result = apply();
      release.run();
      batch.commits += 1;
      return { result, committed: batch.done };
    } catch (error) {
      // SQLite rolled the whole transaction back (the batch's earlier commits are gone too), or this commit's writes
      // cannot be undone (they would be committed with the batch): either way the batch is lost.
      if (!sqlite.inTransaction || !undoSavepoint()) lose(batch, error);
      throw error;
    }
  };

  return {
    /**
     * Runs `apply` (synchronous, no transaction of its own) in the turn's batch, opened first if none is: alone in the
     * batch's transaction when it opens it, in a savepoint of it otherwise. Throws what `apply` throws, with what it
     * wrote rolled back. `committed` resolves once the batch is committed, and rejects when it is lost.
     */
    apply<T>(apply: () => T): { result: T; committed: Promise<void> } {
      return open ? inSavepoint(open, apply) : first(apply);
    },
    /** The open batch's commit (its rows may have been read: resolves once committed, rejects if lost), if one is open. */
    committed(): Promise<void> | undefined {
      return open?.done;
    },
    /** Commits the open batch now: before the connection closes. */
    end: endOpen,
  };
}

/** How to end each connection's open batch, in this process (this thread: a module instance per worker). */
const openBatches = new Set<() => void>();

/** Commits every open batch of this process now (see createCommitBatches). */
export function endOpenBatches(): void {
  for (const endOne of [...openBatches]) endOne();
}

interface Batch {
  /** How many commits it holds (the failed ones rolled back to their savepoints are not counted). */
  commits: number;
  done: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function newBatch(): Batch {
  let resolve = () => {};
  let reject: (error: unknown) => void = () => {};
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A lost batch nobody waits on any more (its members' calls ended) is no unhandled rejection: each member handles it.
  done.catch(() => {});
  return { commits: 0, done, resolve, reject };
}
