/**
 * Group commit: the disk sync that makes commits durable is shared by every commit applied since the last one.
 *
 * Each commit is applied as before, at once and in its own transaction, in the same turn of the event loop as the
 * reads its command made — so commands never interleave between their reads and their writes, and nobody sees
 * rows that are not committed. What is deferred is only the sync: SQLite writes the commit to its log (WAL) without
 * syncing it, and the caller's promise waits for a sync of the log that started after its commit. Syncs run off
 * the event loop (libuv's thread pool) one at a time; the commits that arrive while one runs are made durable
 * together by the next. Under load one sync serves many writes; without load a write waits for one sync, as
 * before, but without holding the event loop while the disk works.
 *
 * A commit acknowledged after its sync survives a power loss; a row committed but not yet synced is visible to
 * readers for that short while — and a reader's own later write, once acknowledged, makes it durable as well, since
 * the log is synced in order.
 */
export function createGroupSync(sync: () => Promise<void>, onSync?: (commits: number) => void) {
  let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  let syncing = false;

  const startSync = () => {
    syncing = true;
    const served = waiting;
    waiting = [];
    sync().then(
      () => settle(served, (entry) => entry.resolve()),
      (error: unknown) => settle(served, (entry) => entry.reject(error)),
    );
  };
  const settle = (served: typeof waiting, outcome: (entry: (typeof waiting)[number]) => void) => {
    syncing = false;
    if (waiting.length > 0) startSync();
    for (const entry of served) outcome(entry);
    onSync?.(served.length);
  };

  return {
    /** Resolves once everything committed before the call is durable. */
    durable(): Promise<void> {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        if (!syncing) startSync();
      });
    },
  };
}
