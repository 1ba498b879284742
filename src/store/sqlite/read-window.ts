import type Database from "better-sqlite3";

/**
 * Read snapshots shared by the reads of one turn of the event loop.
 *
 * In WAL mode a statement run outside a transaction takes and drops SQLite's read locks (a file lock and a
 * shared-memory lock: system calls) — about 15 µs here, several times the cost of the read itself, and an
 * authenticated call makes several reads. So the reads of one turn (typically all of one call's reads, which run one
 * after another as microtasks) share one read transaction: the first read opens it, and it ends when the turn is over
 * (setImmediate; a window opened in an immediate callback lasts into the next turn) or before this connection writes,
 * whichever comes first. A read therefore sees the database as it
 * was when its window opened; a commit of this process ends the window first, so a read never misses a write this
 * process acknowledged, and another process's commits are seen from the next window on.
 *
 * Opening a window also reads PRAGMA data_version inside the new snapshot: a change there means another connection
 * (`gatehouse recover-admin`, beside a running server) committed, and `onOtherCommits` hears of it before any read
 * of the window returns — so whatever a read can show has been noted for the next disk sync and for the principal
 * cache, without a PRAGMA per call.
 *
 * While this connection's write batch is open (commit-batches.ts) no window opens: reads run in the batch's
 * transaction and see its current state, commits of the turn included; the batch noted other connections' commits
 * when it opened, and none can commit while it holds the write lock.
 */
export function createReadWindows(sqlite: Database.Database, onOtherCommits: () => void) {
  const begin = sqlite.prepare("BEGIN DEFERRED");
  const end = sqlite.prepare("COMMIT");
  // A deferred transaction takes its snapshot at its first read of a table; data_version is only current after that.
  const takeSnapshot = sqlite.prepare("SELECT 1 FROM sqlite_master LIMIT 1");
  const dataVersion = sqlite.prepare("PRAGMA data_version").pluck();
  let open = false;
  let seenVersion = dataVersion.get() as number;

  const close = () => {
    if (!open) return;
    open = false;
    end.run();
  };

  const noteOtherCommits = () => {
    const version = dataVersion.get() as number;
    if (version !== seenVersion) {
      seenVersion = version;
      onOtherCommits();
    }
  };

  return {
    /** Makes sure a window is open: every read of the store runs after this, in the same synchronous stretch. */
    enter(): void {
      // Inside this connection's open write batch (commit-batches.ts), reads run in its transaction and see its commits.
      if (open || sqlite.inTransaction) return;
      begin.run();
      open = true;
      setImmediate(close);
      takeSnapshot.get();
      noteOtherCommits();
    },
    /**
     * Notes other connections' commits now, outside any window: for what a write transaction saw without a window (a
     * commit refused because of another process's row answers from that row, which must be durable first).
     */
    noteOtherCommits,
    /** Ends the open window, if any: before a write, and before the connection closes. */
    close,
    /** How many times another connection's commits were seen, as SQLite counts them (PRAGMA data_version). */
    otherCommitsSeen(): number {
      return seenVersion;
    },
  };
}

type ReadWindows = ReturnType<typeof createReadWindows>;

/** Wraps each read method so that it runs inside a read window (see createReadWindows). */
export function insideReadWindows<T extends Record<string, (...args: never[]) => Promise<unknown>>>(reads: T, windows: Pick<ReadWindows, "enter">): T {
  const wrapped: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, read] of Object.entries(reads)) {
    wrapped[name] = (...args) => {
      windows.enter();
      return read(...args);
    };
  }
  return wrapped as T;
}
