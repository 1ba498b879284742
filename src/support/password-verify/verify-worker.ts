import { parentPort, threadId } from "node:worker_threads";
import { checkImportedHash } from "./check-hash.js";

/** One message in, one message out; see verifier-pool.ts for the protocol. */
export interface VerifyJob {
  id: number;
  encoded: string;
  password: string;
}
export type VerifyReply = { id: number; threadId: number } & ({ matches: boolean } | { failed: string });

// The worker thread of verifier-pool.ts: verifies one imported hash at a time, synchronously,
// so the main thread's event loop (and libuv's shared pool) never waits for a hash.
parentPort?.on("message", (job: VerifyJob) => {
  let reply: VerifyReply;
  try {
    reply = { id: job.id, threadId, matches: checkImportedHash(job.encoded, job.password) };
  } catch (error) {
    // The name only: a message could one day quote input, and the password must never leave here.
    // Stryker disable next-line StringLiteral: unreachable, checkImportedHash throws only Error objects (DomainError, or TypeError/RangeError from node:crypto)
    reply = { id: job.id, threadId, failed: error instanceof Error ? error.name : "unknown" };
  }
  // Stryker disable next-line OptionalChaining: this handler is registered only on a parentPort that exists
  parentPort?.postMessage(reply);
});
