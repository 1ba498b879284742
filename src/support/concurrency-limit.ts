/**
 * Runs at most `size` of the tasks handed to it at once; the others wait, first come first served. A finished task
 * hands its slot straight to the next waiting one, so a task arriving meanwhile cannot take it: never more than `size`.
 *
 * A task may come with the signal of the call it is for. A waiting task whose signal has fired by the time a slot is
 * free never runs: it is passed over, and its promise rejects with the signal's reason (as `fetch` does). A call that
 * queued a thousand password hashes and went away must not keep the cores busy for its absent caller, ahead of
 * everyone who came after it. A task already running finishes (an argon2id cannot be stopped midway). The signal is
 * read when a slot frees rather than listened to: a call's thousand waiting tasks add no listener to it.
 */
export function createConcurrencyLimit(size: number) {
  let running = 0;
  const waiting: { start: () => void; refuse: (reason: unknown) => void; signal: AbortSignal | undefined }[] = [];

  /** Hands a freed slot to the first waiting task whose call is not over, refusing the others on the way. */
  const handOn = () => {
    for (let next = waiting.shift(); next; next = waiting.shift()) {
      if (!next.signal?.aborted) return next.start();
      next.refuse(next.signal.reason);
    }
    running--;
  };

  return async function run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw signal.reason;
    if (running < size) running++;
    else await new Promise<void>((start, refuse) => waiting.push({ start, refuse, signal }));
    try {
      return await task();
    } finally {
      handOn();
    }
  };
}
