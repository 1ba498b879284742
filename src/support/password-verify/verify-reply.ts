import { threadId } from "node:worker_threads";
import { checkImportedHash } from "./check-hash.js";

/** One message in, one message out; see verifier-pool.ts for the protocol. */
export interface VerifyJob {
  id: number;
  encoded: string;
  password: string;
}
export type VerifyReply = { id: number; threadId: number } & ({ matches: boolean } | { failed: string });

/**
 * What a verifier thread (verify-worker.ts) answers for one job: whether the password matches, or that the
 * job failed. Synchronous, so it blocks only the thread it runs on.
 */
export function answerJob(job: VerifyJob): VerifyReply {
  try {
    return { id: job.id, threadId, matches: checkImportedHash(job.encoded, job.password) };
  } catch (error) {
    // The name only: a message could one day quote input, and the password must never leave here.
    // Stryker disable next-line StringLiteral: unreachable, checkImportedHash throws only Error objects (DomainError, or TypeError/RangeError from node:crypto)
    return { id: job.id, threadId, failed: error instanceof Error ? error.name : "unknown" };
  }
}
