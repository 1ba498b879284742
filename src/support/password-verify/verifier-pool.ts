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
  /** Worker threads, each verifying one hash at a time. Default: the usable cores, at most 8. */
  size?: number;
  /** Verifications allowed to wait for a free worker. Default 256. */
  maxQueued?: number;
  /**
   * Verifications of one owner allowed to run at once. Default: all workers but one (one on a one-worker pool), so
   * whatever one owner's hashes cost, another owner's verification always finds a worker soon.
   */
  maxRunningPerOwner?: number;
  /** Verifications of one owner allowed to wait. Default: a quarter of `maxQueued` (at least one), so no one owner fills the queue. */
  maxQueuedPerOwner?: number;
}

export interface VerifyResult {
  matches: boolean;
  /** The worker thread that did the work (never 0, the main thread). */
  threadId: number;
}

export interface VerifierPool {
  readonly size: number;
  /**
   * Verifies on a worker thread; `signal` drops the job while it still waits in the queue. `owner` is whose hash it is
   * (the server passes the user's organization): one owner's verifications never hold every worker, nor fill the queue.
   */
  verify(encoded: string, password: string, signal?: AbortSignal, owner?: string): Promise<VerifyResult>;
  /** Refuses new work, fails waiting and running jobs with VerifierClosedError, ends the threads. */
  close(): Promise<void>;
}

interface Pending {
  job: VerifyJob;
  owner: string;
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
 * Fair between owners: an organization whose user manager imported hashes at the highest accepted cost (seconds
 * each) would otherwise have its users' sign-ins, or its own re-imports, hold every worker, and every other
 * organization's sign-ins wait behind them. An owner runs on at most `maxRunningPerOwner` workers and waits in at
 * most `maxQueuedPerOwner` places; the queue is served in order, skipping the jobs of an owner at its limit.
 */
export function createVerifierPool(options: VerifierPoolOptions = {}): VerifierPool {
  const size = Math.max(1, options.size ?? Math.min(availableParallelism(), 8));
  const maxQueued = options.maxQueued ?? 256;
  const maxRunningPerOwner = Math.max(1, options.maxRunningPerOwner ?? size - 1);
  const maxQueuedPerOwner = options.maxQueuedPerOwner ?? Math.max(1, Math.floor(maxQueued / 4));
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  const runningOf = new Map<string, number>();
  const waitingOf = new Map<string, number>();
  let nextId = 1;
  let closed = false;

  // Counts per owner; an owner whose count drops to zero leaves the map, so it stays as small as the work in flight.
  const count = (counts: Map<string, number>, owner: string, by: 1 | -1) => {
    const next = (counts.get(owner) ?? 0) + by;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a zero kept in the map counts as the absent entry does; deleting it only keeps the map small
    if (next === 0) counts.delete(owner);
    else counts.set(owner, next);
  };
  const leaveQueue = (pending: Pending) => {
    queue.splice(queue.indexOf(pending), 1);
    count(waitingOf, pending.owner, -1);
  };
  const finish = (slot: Slot): Pending | undefined => {
    const running = slot.running;
    slot.running = undefined;
    if (running) count(runningOf, running.owner, -1);
    return running;
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
      // The first waiting job whose owner may run one more; the others keep their places.
      const pending = queue.find((p) => (runningOf.get(p.owner) ?? 0) < maxRunningPerOwner);
      if (!pending) return;
      const slot = slots.find((s) => !s.running) ?? (slots.length < size ? spawn() : undefined);
      if (!slot) return;
      leaveQueue(pending);
      pending.detach();
      count(runningOf, pending.owner, 1);
      slot.running = pending;
      slot.worker.ref();
      slot.worker.postMessage(pending.job);
    }
  }

  return {
    size,
    verify(encoded, password, signal, owner = "") {
      if (closed) return Promise.reject(new VerifierClosedError("password verifier closed"));
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      if (queue.length >= maxQueued) return Promise.reject(new VerifierBusyError(`more than ${maxQueued} password verifications waiting`));
      if ((waitingOf.get(owner) ?? 0) >= maxQueuedPerOwner) {
        return Promise.reject(new VerifierBusyError(`more than ${maxQueuedPerOwner} password verifications of one owner waiting`));
      }
      return new Promise<VerifyResult>((resolve, reject) => {
        // Stryker disable next-line UpdateOperator: counting down keeps the ids unique just as well
        const pending: Pending = { job: { id: nextId++, encoded, password }, owner, resolve, reject, detach: () => signal?.removeEventListener("abort", onAbort) };
        function onAbort() {
          // Stryker disable next-line ConditionalExpression: the listener is removed when the job leaves the queue (detach), so it runs only while the job waits in it
          if (!queue.includes(pending)) return;
          leaveQueue(pending);
          reject(signal?.reason as Error);
        }
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal aborts once, and the listener goes when the job leaves the queue
        signal?.addEventListener("abort", onAbort, { once: true });
        queue.push(pending);
        count(waitingOf, owner, 1);
        dispatch();
      });
    },
    async close() {
      closed = true;
      waitingOf.clear();
      for (const pending of queue.splice(0)) {
        pending.detach();
        pending.reject(new VerifierClosedError("password verifier closed"));
      }
      await Promise.all(slots.map((slot) => slot.worker.terminate()));
    },
  };
}
