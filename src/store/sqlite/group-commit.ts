import { DomainError } from "../../domain/errors.js";

/**
 * Group commit: the disk sync that makes commits durable is shared by every commit applied since the last one.
 *
 * Each commit is applied at once, in the same turn of the event loop as the reads its command made — so commands
 * never interleave between their reads and their writes — in the transaction that turn's commits share
 * (commit-batches.ts), which commits when the turn ends. What is deferred past that is the sync: SQLite writes the
 * transaction to its log (WAL) without syncing it (db.ts), and `durable()` waits for a sync of the log that started
 * after every commit noted so far. Syncs run off
 * the event loop (libuv's thread pool), one at a time; the commits noted while one runs are made durable together
 * by the next. Under load one sync serves many writes; without load a write waits for one sync, as before, but
 * without holding the event loop while the disk works.
 *
 * Nothing may leave the process before the state it reflects is durable: a write's answer, an answer computed from
 * another write's rows (a conflict, a read), a mail. So `durable()` is also the barrier every answer and every send
 * waits for; it costs nothing when no commit is waiting for its sync.
 *
 * A failed sync is fatal (PostgreSQL's lesson: after a failed fsync the kernel may have dropped the dirty pages, and
 * a later sync that succeeds proves nothing): every waiting and later `durable()` and every later commit fail
 * (`store.sync_failed`), and `onFailure` is told once so the process can stop without closing the database (a close
 * would checkpoint from the page cache). A restart recovers from the log as the system then reads it — after a
 * failing disk, only a reboot is sure to read the disk rather than the page cache.
 */
export function createGroupSync(sync: () => Promise<void>, options: { onSync?: (commits: number) => void; onFailure?: (error: unknown) => void } = {}) {
  let noted = 0;
  let synced = 0;
  let syncing: Promise<void> | undefined;
  let failure: DomainError | undefined;
  let waiting: { upTo: number; resolve: () => void; reject: (error: unknown) => void }[] = [];

  const fail = (error: unknown) => {
    failure = new DomainError("unavailable", "store.sync_failed", "the database could not be made durable; the server must restart");
    for (const entry of waiting.splice(0)) entry.reject(failure);
    options.onFailure?.(error);
  };

  const startSync = () => {
    const upTo = noted;
    syncing = Promise.resolve()
      .then(sync)
      .then(
        () => {
          syncing = undefined;
          const served = waiting.filter((entry) => entry.upTo <= upTo);
          waiting = waiting.filter((entry) => entry.upTo > upTo);
          const commits = upTo - synced;
          synced = upTo;
          if (waiting.length > 0) startSync();
          for (const entry of served) entry.resolve();
          options.onSync?.(commits);
        },
        (error: unknown) => {
          syncing = undefined;
          fail(error);
        },
      );
  };

  return {
    /** Throws once a sync failed: no commit may be applied after that. */
    refuseIfFailed(): void {
      if (failure) throw failure;
    },
    /** A commit (or `commits` of them, one batch) was applied: written to the log, not synced. */
    noteCommit(commits = 1): void {
      noted += commits;
    },
    /** Resolves once every commit noted before the call is durable (at once when none waits for its sync). */
    durable(): Promise<void> {
      if (failure) return Promise.reject(failure);
      if (synced >= noted) return Promise.resolve();
      return new Promise((resolve, reject) => {
        waiting.push({ upTo: noted, resolve, reject });
        if (!syncing) startSync();
      });
    },
    /** Whether a sync failed (the store then refuses every commit). */
    failed(): boolean {
      return failure !== undefined;
    },
    /** Resolves when no sync is running (before the log file is closed). */
    async idle(): Promise<void> {
      while (syncing) await syncing;
    },
  };
}
