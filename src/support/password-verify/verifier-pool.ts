import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { VerifyJob, VerifyReply } from "./verify-worker.js";

/** More waiting verifications than this are refused rather than queued without bound. */
export class VerifierBusyError extends Error {
  // Stryker disable next-line StringLiteral: only in stack traces; verify.ts tells it by its class
  override readonly name = "VerifierBusyError";
}
/** The pool was closed (server shutdown) before the verification ran or finished. */
export class VerifierClosedError extends Error {
  // Stryker disable next-line StringLiteral: only in stack traces; verify.ts tells it by its class
  override readonly name = "VerifierClosedError";
}

export interface VerifierPoolOptions {
  /**
   * Worker threads, each verifying one hash at a time. Default: the usable cores, at least 2 and at most 8 (on one core
   * the second thread shares it, so a cheap check still runs beside a costly one).
   */
  size?: number;
  /** Verifications allowed to wait for a free worker. Default 256. */
  maxQueued?: number;
  /** Costly verifications allowed to run at once. Default: all workers but one (one on a one-worker pool). */
  maxCostlyRunning?: number;
  /** Costly verifications allowed to wait. Default: a quarter of `maxQueued` (at least one). */
  maxCostlyQueued?: number;
  /** Costly verifications of one owner allowed to wait. Default: a quarter of `maxCostlyQueued` (at least one). */
  maxCostlyQueuedPerOwner?: number;
}

export interface VerifyResult {
  matches: boolean;
  /** The worker thread that did the work (never 0, the main thread). */
  threadId: number;
}

export interface VerifierPool {
  readonly size: number;
  /**
   * Verifies on a worker thread; `signal` drops the job while it still waits in the queue. `costly` marks a hash that
   * costs clearly more than a default argon2id, with its owner (the server passes the user's organization).
   */
  verify(encoded: string, password: string, signal?: AbortSignal, costly?: { owner: string }): Promise<VerifyResult>;
  /** Refuses new work, fails waiting and running jobs with VerifierClosedError, ends the threads. */
  close(): Promise<void>;
}

interface Pending {
  job: VerifyJob;
  /** The owner of a costly job; undefined for a cheap one. */
  costlyOwner: string | undefined;
  resolve(result: VerifyResult): void;
  reject(error: Error): void;
  detach(): void;
}

interface Slot {
  worker: Worker;
  running?: Pending;
}

// Under tsx (npm start) and vitest this module is TypeScript, and so is the worker beside it;
// compiled, both are JavaScript and the worker starts directly.
const isTypeScript = import.meta.url.endsWith(".ts");
const workerEntry = new URL(
  isTypeScript
    ? "./verify-worker.ts"
    : // Stryker disable next-line StringLiteral: the compiled build's path; under vitest (and so under Stryker) this module is TypeScript
      "./verify-worker.js",
  import.meta.url,
);
const startWorker = () =>
  isTypeScript ? new Worker(new URL("./typescript-worker-entry.mjs", import.meta.url), { workerData: { entry: workerEntry.href } }) : new Worker(workerEntry);

/**
 * A fixed set of worker threads for imported-hash verification. Every scheme runs here, also the
 * ones with async native APIs: libuv's pool (4 threads) is shared with file I/O, DNS and zlib, and
 * 256 MiB argon2/scrypt jobs there would stall them; here at most `size` hashes run at once, so CPU
 * and memory stay bounded (size × 256 MiB) and the queue is bounded too. Idle threads are unref'd,
 * so the pool never keeps a process alive on its own.
 *
 * Costly hashes never hold every worker: a user manager may import hashes at the highest accepted cost (seconds
 * each) and anyone at a login page may have them checked, and every other sign-in would wait behind them. Costly jobs
 * run on at most `maxCostlyRunning` workers and wait in at most `maxCostlyQueued` places, of which one owner holds at
 * most `maxCostlyQueuedPerOwner`; among them, the owner served least recently goes first, so one organization's costly
 * hashes neither starve nor crowd out another's. Cheap jobs (a default argon2id, the dummy of an unknown user) are
 * served in order on any worker, whoever owns them: a busy answer for a cheap check says nothing of whose it is.
 */
export function createVerifierPool(options: VerifierPoolOptions = {}): VerifierPool {
  const size = Math.max(1, options.size ?? Math.max(2, Math.min(availableParallelism(), 8)));
  const maxQueued = options.maxQueued ?? 256;
  const maxCostlyRunning = Math.max(1, options.maxCostlyRunning ?? size - 1);
  const maxCostlyQueued = options.maxCostlyQueued ?? Math.max(1, Math.floor(maxQueued / 4));
  const maxCostlyQueuedPerOwner = options.maxCostlyQueuedPerOwner ?? Math.max(1, Math.floor(maxCostlyQueued / 4));
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  let costlyRunning = 0;
  let costlyWaiting = 0;
  /** Each owner's waiting costly jobs; an owner leaves when it has none. */
  const costlyWaitingOf = new Map<string, number>();
  /** When each owner's costly job last started (a tick); forgotten whenever no costly job waits. */
  const lastServed = new Map<string, number>();
  let tick = 0;
  let nextId = 1;
  let closed = false;

  const leaveQueue = (pending: Pending) => {
    queue.splice(queue.indexOf(pending), 1);
    if (pending.costlyOwner === undefined) return;
    costlyWaiting--;
    const left = costlyWaitingOf.get(pending.costlyOwner)! - 1;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a zero kept in the map counts as the absent entry does; deleting it only keeps the map small
    if (left === 0) costlyWaitingOf.delete(pending.costlyOwner);
    else costlyWaitingOf.set(pending.costlyOwner, left);
    // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: forgetting keeps the map as small as the costly queue; kept, old ticks rank their owners as early as absent ones among the owners that wait next
    if (costlyWaiting === 0) lastServed.clear();
  };
  const finish = (slot: Slot): Pending | undefined => {
    const running = slot.running;
    slot.running = undefined;
    if (running?.costlyOwner !== undefined) costlyRunning--;
    return running;
  };
  /** The waiting costly job of the owner served least recently (the first in the queue among equals). */
  const fairestCostly = (): Pending => {
    let fairest: Pending | undefined;
    let fairestServed = Infinity;
    for (const pending of queue) {
      if (pending.costlyOwner === undefined) continue;
      const served = lastServed.get(pending.costlyOwner) ?? -1;
      if (served < fairestServed) [fairest, fairestServed] = [pending, served];
    }
    return fairest!;
  };
  /** The next job to start: the first waiting one, unless it is costly, when the fairest costly one, if one may run. */
  const nextJob = (): Pending | undefined => {
    for (const pending of queue) {
      if (pending.costlyOwner === undefined) return pending;
      if (costlyRunning < maxCostlyRunning) return fairestCostly();
    }
    return undefined;
  };

  const spawn = (): Slot => {
    const slot: Slot = { worker: startWorker() };
    // A thread that errors also exits; whichever comes first retires the slot, once.
    const fail = (error: Error) => {
      const index = slots.indexOf(slot);
      if (index < 0) return;
      slots.splice(index, 1);
      finish(slot)?.reject(error);
      // Also once closed: close() emptied the queue and verify() refuses new jobs, so there is nothing to dispatch.
      dispatch();
    };
    slot.worker.on("message", (reply: VerifyReply) => {
      const running = slot.running;
      if (!running || running.job.id !== reply.id) return;
      finish(slot);
      slot.worker.unref();
      if ("failed" in reply) running.reject(new Error(`password verification failed in the worker (${reply.failed})`));
      else running.resolve({ matches: reply.matches, threadId: reply.threadId });
      dispatch();
    });
    slot.worker.on("error", (error) => fail(new Error(`password verifier worker crashed: ${error.name}`)));
    slot.worker.on("exit", (code) => fail(closed ? new VerifierClosedError("password verifier closed") : new Error(`password verifier worker exited (${code})`)));
    slots.push(slot);
    return slot;
  };

  function dispatch(): void {
    for (;;) {
      const pending = nextJob();
      if (!pending) return;
      const slot = slots.find((s) => !s.running) ?? (slots.length < size ? spawn() : undefined);
      if (!slot) return;
      leaveQueue(pending);
      pending.detach();
      if (pending.costlyOwner !== undefined) {
        costlyRunning++;
        lastServed.set(pending.costlyOwner, tick++);
      }
      slot.running = pending;
      slot.worker.ref();
      slot.worker.postMessage(pending.job);
    }
  }

  return {
    size,
    verify(encoded, password, signal, costly) {
      if (closed) return Promise.reject(new VerifierClosedError("password verifier closed"));
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      if (queue.length >= maxQueued) return Promise.reject(new VerifierBusyError(`more than ${maxQueued} password verifications waiting`));
      if (costly && costlyWaiting >= maxCostlyQueued) return Promise.reject(new VerifierBusyError(`more than ${maxCostlyQueued} costly password verifications waiting`));
      if (costly && (costlyWaitingOf.get(costly.owner) ?? 0) >= maxCostlyQueuedPerOwner) {
        return Promise.reject(new VerifierBusyError(`more than ${maxCostlyQueuedPerOwner} costly password verifications of one owner waiting`));
      }
      return new Promise<VerifyResult>((resolve, reject) => {
        // Stryker disable next-line UpdateOperator: counting down keeps the ids unique just as well
        const pending: Pending = { job: { id: nextId++, encoded, password }, costlyOwner: costly?.owner, resolve, reject, detach: () => signal?.removeEventListener("abort", onAbort) };
        function onAbort() {
          // Stryker disable next-line ConditionalExpression: the listener is removed when the job leaves the queue (detach), so it runs only while the job waits in it
          if (!queue.includes(pending)) return;
          leaveQueue(pending);
          reject(signal?.reason as Error);
        }
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal aborts once, and the listener goes when the job leaves the queue
        signal?.addEventListener("abort", onAbort, { once: true });
        queue.push(pending);
        if (costly) {
          costlyWaiting++;
          costlyWaitingOf.set(costly.owner, (costlyWaitingOf.get(costly.owner) ?? 0) + 1);
        }
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const pending of queue.splice(0)) {
        pending.detach();
        pending.reject(new VerifierClosedError("password verifier closed"));
      }
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}
