/** What one commit of a batch came to: its result, or its own error (the others are not affected). */
export type CommitOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/**
 * Group commit: the commits requested while the event loop is busy are applied together, in one database
 * transaction, so they share one durable sync (with synchronous=FULL, one fsync per transaction is what a write
 * costs; paid once per batch, the rate no longer stops at the disk's sync rate). `runBatch` applies each commit in
 * its own savepoint and says per commit how it went; it throws when the transaction as a whole failed (nothing of
 * the batch is kept). Every caller's promise settles only after `runBatch` returned, that is after the transaction
 * is durable: no write is acknowledged before it would survive a crash.
 *
 * The first commit of an idle server waits only for the current turn of the event loop (setImmediate): a
 * batch is what piled up meanwhile, so under no load a commit is applied alone and as soon as before.
 */
export function createGroupCommit<C, R>(runBatch: (commits: C[]) => CommitOutcome<R>[], options: { maxBatch: number; onBatch?: (size: number) => void }) {
  let queue: { commit: C; resolve: (value: R) => void; reject: (error: unknown) => void }[] = [];
  let scheduled = false;

  const flush = () => {
    const batch = queue.splice(0, options.maxBatch);
    if (queue.length > 0) setImmediate(flush);
    else scheduled = false;
    let outcomes: CommitOutcome<R>[];
    try {
      outcomes = runBatch(batch.map((entry) => entry.commit));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    options.onBatch?.(batch.length);
    batch.forEach((entry, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  };

  return (commit: C): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      queue.push({ commit, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
