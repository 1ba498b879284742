import { getEventListeners } from "node:events";
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { VerifierPool } from "../../src/support/password-verify/verifier-pool.js";

// Faults of a verifier thread, injected: the pool starts its threads through node:worker_threads'
// Worker, which this file replaces by a subclass that runs the next script of `faultyThreads` (a
// real thread that dies or answers wrongly) and, once those are used up, the real verifier thread.
// The mutation suite shares one module graph between test files (isolate: false), so the pool is
// loaded as a copy of its own (the query string) and the replacement is undone after this file.

const faultyThreads: string[] = [];
let createVerifierPool: typeof import("../../src/support/password-verify/verifier-pool.js").createVerifierPool;
beforeAll(async () => {
  vi.doMock("node:worker_threads", async (importOriginal) => {
    const real = await importOriginal<typeof import("node:worker_threads")>();
    class WorkerWithFaults extends real.Worker {
      constructor(file: string | URL, options?: import("node:worker_threads").WorkerOptions) {
        const fault = faultyThreads.shift();
        if (fault === undefined) super(file, options);
        else super(fault, { eval: true });
      }
    }
    return { ...real, Worker: WorkerWithFaults };
  });
  const ownCopy = "../../src/support/password-verify/verifier-pool.js?with-injected-faults";
  ({ createVerifierPool } = (await import(/* @vite-ignore */ ownCopy)) as typeof import("../../src/support/password-verify/verifier-pool.js"));
});
afterAll(() => {
  vi.doUnmock("node:worker_threads");
});

/** Thread scripts: each takes the first job it is given and then misbehaves. */
const onFirstJob = (body: string) => `require("node:worker_threads").parentPort.once("message", (job) => { ${body} });`;
const exitsWithCode7 = onFirstJob("process.exit(7);");
const throwsWithASecretInItsMessage = onFirstJob('throw new TypeError("hunter2 leaked");');
const answersAnotherJobFirst = onFirstJob(`
  const { parentPort, threadId } = require("node:worker_threads");
  parentPort.postMessage({ id: job.id + 1000, threadId, matches: true });
  parentPort.postMessage({ id: job.id, threadId, matches: false });`);

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};
const hashOf = (scheme: string) => fixtures.hashes.find((f) => f.scheme === scheme)!.hash;
const md5 = hashOf("md5-crypt");

const pools: VerifierPool[] = [];
const pool = (options: { size?: number; maxQueued?: number }) => {
  const created = createVerifierPool(options);
  pools.push(created);
  return created;
};
afterEach(async () => {
  faultyThreads.length = 0;
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("the verifier pool when a thread fails (injected faults)", () => {
  it("fails the job of a thread that exits, naming the exit code, and runs the waiting job on a fresh thread", async () => {
    faultyThreads.push(exitsWithCode7);
    const verifier = pool({ size: 1 });
    const cutOff = verifier.verify(md5, fixtures.password);
    const waiting = verifier.verify(md5, fixtures.password);
    await expect(cutOff).rejects.toThrow("password verifier worker exited (7)");
    expect((await waiting).matches).toBe(true);
  });

  it("fails the job of a thread that crashes with the error's name only, never its message", async () => {
    faultyThreads.push(throwsWithASecretInItsMessage);
    const verifier = pool({ size: 1 });
    const error = (await verifier.verify(md5, fixtures.password).catch((e: unknown) => e)) as Error;
    expect(error.message).toBe("password verifier worker crashed: TypeError");
    expect(error.message).not.toContain("hunter2");
    // The crash retired the thread; the next job gets a working one.
    expect((await verifier.verify(md5, fixtures.password)).matches).toBe(true);
  });

  it("retires only the crashed thread: the healthy one keeps serving, not a new thread in its place", async () => {
    faultyThreads.push(throwsWithASecretInItsMessage);
    const verifier = pool({ size: 2 });
    const onCrashingThread = verifier.verify(md5, fixtures.password);
    const onHealthyThread = verifier.verify(md5, fixtures.password);
    await expect(onCrashingThread).rejects.toThrow("crashed");
    // A crashed thread reports an error and then an exit; neither report may retire the other thread.
    const first = await onHealthyThread;
    const next = await verifier.verify(md5, fixtures.password);
    expect(next.threadId).toBe(first.threadId);
  });

  it("settles a job only with the reply carrying its own id", async () => {
    faultyThreads.push(answersAnotherJobFirst);
    const verifier = pool({ size: 1 });
    // The stray reply says "matches"; the job's own reply says it does not.
    expect((await verifier.verify(md5, fixtures.password)).matches).toBe(false);
  });
});

describe("the verifier pool and its callers' abort signals", () => {
  it("stops listening to the signals of jobs that close() fails", async () => {
    const verifier = pool({ size: 1 });
    const running = verifier.verify(md5, fixtures.password).catch((e: unknown) => e);
    const caller = new AbortController();
    const waiting = verifier.verify(md5, fixtures.password, caller.signal).catch((e: unknown) => e);
    await verifier.close();
    expect(await waiting).toMatchObject({ name: "VerifierClosedError" });
    expect(await running).toMatchObject({ name: "VerifierClosedError" });
    expect(getEventListeners(caller.signal, "abort")).toHaveLength(0);
  });

  it("refuses at once a job whose caller already gave up, with the caller's reason", async () => {
    const verifier = pool({ size: 1 });
    const reason = new Error("caller gone");
    await expect(verifier.verify(md5, fixtures.password, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
