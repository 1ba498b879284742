import { once } from "node:events";
import { readFileSync } from "node:fs";
import { MessageChannel, threadId, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { VerifyJob, VerifyReply } from "../../src/support/password-verify/verify-worker.js";

// verify-worker.ts is the body of each verifier thread. Here it is loaded in the test's own thread
// with a real MessageChannel as its parent port, so what it answers for a job is checked where a
// mutation-testing mutant is active. The pool side of the protocol is in verifier-pool*.test.ts.

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};
const md5 = fixtures.hashes.find((f) => f.scheme === "md5-crypt")!.hash;

const openPorts: MessagePort[] = [];
afterEach(() => {
  for (const port of openPorts.splice(0)) port.close();
  vi.doUnmock("node:worker_threads");
});

let copies = 0;
/**
 * Loads a fresh copy of the worker module (the query string makes it a module of its own, also where
 * test files share one module graph) with `parentPort` as node:worker_threads gives it.
 */
async function loadWorker(parentPort: MessagePort | null): Promise<void> {
  vi.doMock("node:worker_threads", async (importOriginal) => ({ ...(await importOriginal<typeof import("node:worker_threads")>()), parentPort }));
  const copy = `../../src/support/password-verify/verify-worker.js?copy=${++copies}`;
  await import(/* @vite-ignore */ copy);
}

/** A worker listening on one end of a channel; `ask` sends a job from the other end and awaits the reply. */
async function startWorker() {
  const { port1, port2 } = new MessageChannel();
  openPorts.push(port1, port2);
  await loadWorker(port1);
  return async (job: VerifyJob): Promise<VerifyReply> => {
    const reply = once(port2, "message") as Promise<[VerifyReply]>;
    port2.postMessage(job);
    // A worker that never answers fails here instead of at the test timeout.
    const deadline = AbortSignal.timeout(5_000);
    const [answer] = await Promise.race([reply, once(deadline, "abort").then(() => Promise.reject(new Error("the worker did not answer within 5 s")))]);
    return answer;
  };
}

describe("the verifier thread's message handler, in this thread", () => {
  it("answers a job with its id, its thread and whether the password matches", async () => {
    const ask = await startWorker();
    expect(await ask({ id: 41, encoded: md5, password: fixtures.password })).toEqual({ id: 41, threadId, matches: true });
    expect(await ask({ id: 42, encoded: md5, password: `${fixtures.password}x` })).toEqual({ id: 42, threadId, matches: false });
  });

  it("answers a job it cannot verify with the error's name only: no message, no password, no hash", async () => {
    const ask = await startWorker();
    const password = "s3cret-password";
    const reply = await ask({ id: 7, encoded: `$1$${password}$toolong`, password });
    expect(reply).toEqual({ id: 7, threadId, failed: "DomainError" });
    expect(JSON.stringify(reply)).not.toContain(password);
  });

  it("keeps answering after a failed job", async () => {
    const ask = await startWorker();
    expect(await ask({ id: 1, encoded: "not a hash", password: "x" })).toMatchObject({ id: 1, failed: "DomainError" });
    expect(await ask({ id: 2, encoded: md5, password: fixtures.password })).toEqual({ id: 2, threadId, matches: true });
  });

  it("loads harmlessly outside a worker thread, where there is no parent port", async () => {
    await expect(loadWorker(null)).resolves.toBeUndefined();
  });
});
