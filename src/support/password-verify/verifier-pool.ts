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
}

export interface VerifyResult {
  matches: boolean;
  /** The worker thread that did the work (never 0, the main thread). */
  threadId: number;
}

export interface VerifierPool {
  readonly size: number;
  /** Verifies on a worker thread; `signal` drops the job while it still waits in the queue. */
  verify(encoded: string, password: string, signal?: AbortSignal): Promise<VerifyResult>;
  /** Refuses new work, fails waiting and running jobs with VerifierClosedError, ends the threads. */
  close(): Promise<void>;
}

interface Pending {
  job: VerifyJob;
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
 */
export function createVerifierPool(options: VerifierPoolOptions = {}): VerifierPool {
  const size = Math.max(1, options.size ?? Math.min(availableParallelism(), 8));
  const maxQueued = options.maxQueued ?? 256;
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  let nextId = 1;
  let closed = false;

  const spawn = (): Slot => {
    const slot: Slot = { worker: startWorker() };
    // A thread that errors also exits; whichever comes first retires the slot, once.
    const fail = (error: Error) => {
      const index = slots.indexOf(slot);
      if (index < 0) return;
      slots.splice(index, 1);
      const running = slot.running;
      slot.running = undefined;
      running?.reject(error);
      // Also once closed: close() emptied the queue and verify() refuses new jobs, so there is nothing to dispatch.
      dispatch();
    };
    slot.worker.on("message", (reply: VerifyReply) => {
      const running = slot.running;
      if (!running || running.job.id !== reply.id) return;
      slot.running = undefined;
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
    while (queue.length > 0) {
      const slot = slots.find((s) => !s.running) ?? (slots.length < size ? spawn() : undefined);
      if (!slot) return;
      const pending = queue.shift()!;
      pending.detach();
      slot.running = pending;
      slot.worker.ref();
      slot.worker.postMessage(pending.job);
    }
  }

  return {
    size,
    verify(encoded, password, signal) {
      if (closed) return Promise.reject(new VerifierClosedError("password verifier closed"));
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      if (queue.length >= maxQueued) return Promise.reject(new VerifierBusyError(`more than ${maxQueued} password verifications waiting`));
      return new Promise<VerifyResult>((resolve, reject) => {
        // Stryker disable next-line UpdateOperator: counting down keeps the ids unique just as well
        const pending: Pending = { job: { id: nextId++, encoded, password }, resolve, reject, detach: () => signal?.removeEventListener("abort", onAbort) };
        function onAbort() {
          const index = queue.indexOf(pending);
          // Stryker disable next-line ConditionalExpression: the listener is removed when the job leaves the queue (detach), so it runs only while the job waits in it
          if (index < 0) return;
          queue.splice(index, 1);
          reject(signal?.reason as Error);
        }
        // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal aborts once, and the listener goes when the job leaves the queue
        signal?.addEventListener("abort", onAbort, { once: true });
        queue.push(pending);
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
