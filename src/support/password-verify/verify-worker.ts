import { parentPort } from "node:worker_threads";
import { answerJob, type VerifyJob } from "./verify-reply.js";

export type { VerifyJob, VerifyReply } from "./verify-reply.js";

// The worker thread of verifier-pool.ts: verifies one imported hash at a time, synchronously,
// so the main thread's event loop (and libuv's shared pool) never waits for a hash.
// Stryker disable next-line OptionalChaining,StringLiteral,BlockStatement: runs only on a verifier thread, where no mutant is active; its work, answerJob, is tested in-process
parentPort?.on("message", (job: VerifyJob) => {
  // Stryker disable next-line OptionalChaining: this handler is registered only on a parentPort that exists
  parentPort?.postMessage(answerJob(job));
});
