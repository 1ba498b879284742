import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { VerifyJob } from "../../src/support/password-verify/verify-reply.js";
import { closedAfterEachTest } from "./verifier-pools.js";

// The verifier pool when a thread misbehaves (src/support/password-verify/verifier-pool.ts): a thread that exits
// fails the job it ran, naming the exit code; one that crashes fails it naming the error's class only (its message
// could quote input); either way only that thread is retired and waiting jobs run on a fresh one; a reply that is not
// for the running job is ignored. The fault is injected where the pool hands a thread its job (Worker#postMessage,
// once): the pool itself is the module every other caller uses.

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; hash: string }[];
};
const md5 = fixtures.hashes.find((f) => f.scheme === "md5-crypt")!.hash;

const realPostMessage = Worker.prototype.postMessage;
/** The next job handed to a thread makes it misbehave as `fault` says, instead of reaching it. */
function nextJobFaults(fault: (thread: Worker, job: VerifyJob) => void) {
  vi.spyOn(Worker.prototype, "postMessage").mockImplementationOnce(function (this: Worker, job: unknown) {
    fault(this, job as VerifyJob);
  });
}
const exits = (thread: Worker) => void thread.terminate();
/** Resolves once the last thread made to crash has exited (after the pool heard of its error and its exit). */
let crashedExit: Promise<unknown> = Promise.resolve();
const crashes = (thread: Worker) => {
  crashedExit = new Promise((resolve) => thread.once("exit", resolve));
  thread.emit("error", new TypeError("hunter2 leaked"));
  void thread.terminate();
};

const pool = closedAfterEachTest();
afterEach(async () => {
  vi.restoreAllMocks();
});

describe("a verifier thread that fails", () => {
  it("exits: its job fails naming the exit code, and the waiting job runs on a fresh thread", async () => {
    nextJobFaults(exits);
    const verifier = pool({ size: 1 });
    const cutOff = verifier.verify(md5, fixtures.password);
    const waiting = verifier.verify(md5, fixtures.password);
    await expect(cutOff).rejects.toThrow(/^password verifier worker exited \(\d+\)$/);
    expect((await waiting).matches).toBe(true);
  });

  it("crashes: its job fails naming the error's class only, and the next job gets a working thread", async () => {
    nextJobFaults(crashes);
    const verifier = pool({ size: 1 });
    const error = (await verifier.verify(md5, fixtures.password).catch((e: unknown) => e)) as Error;
    expect(error.message).toBe("password verifier worker crashed: TypeError");
    expect((await verifier.verify(md5, fixtures.password)).matches).toBe(true);
  });

  it("only the crashed thread is retired: the healthy one keeps serving", async () => {
    nextJobFaults(crashes);
    const verifier = pool({ size: 2 });
    const onCrashing = verifier.verify(md5, fixtures.password);
    const onHealthy = verifier.verify(md5, fixtures.password);
    await expect(onCrashing).rejects.toThrow("crashed");
    const healthy = await onHealthy;
    // Its error and then its exit are reported; neither may retire the other thread.
    await crashedExit;
    const next = await verifier.verify(md5, fixtures.password);
    expect(next.threadId).toBe(healthy.threadId);
  });
});

describe("a reply that is not for the running job", () => {
  it("is ignored: the job settles with its own reply", async () => {
    nextJobFaults((thread, job) => {
      // A stray answer first (for another id, saying "matches"), then the job reaches the thread.
      thread.emit("message", { id: job.id + 1000, threadId: thread.threadId, matches: true });
      realPostMessage.call(thread, job);
    });
    const verifier = pool({ size: 1 });
    expect((await verifier.verify(md5, `${fixtures.password}-wrong`)).matches).toBe(false);
  });
});
