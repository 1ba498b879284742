import { DomainError } from "../../domain/errors.js";
import { parseImportedHash } from "../../domain/imported-hash.js";
import { isCostly } from "../../domain/password-hash.js";
import { createVerifierPool, VerifierBusyError, VerifierClosedError, type VerifierPool } from "./verifier-pool.js";

// One pool per process, started on first use: the server and the import command share it, and a
// process that never verifies an imported hash never starts a thread.
let shared: VerifierPool | undefined;

/**
 * Whether `password` matches an imported hash in any scheme parseImportedHash accepts. The hash is
 * parsed here (invalid_argument before any queuing) and verified on a worker thread, never on the
 * event loop: a hash at the accepted limits costs seconds of CPU. Too many waiting verifications
 * → resource_exhausted `password_verify.busy`; during shutdown → unavailable `password_verify.closed`.
 * `signal` (the call's) drops a verification that is still waiting when the caller gives up. `owner` is the
 * organization whose user the hash is: a costly hash (isCostly) runs in the pool's costly lane, which keeps a worker
 * free of costly hashes and serves their owners in turn.
 */
export async function verifyImportedHash(encoded: string, password: string, signal?: AbortSignal, owner = ""): Promise<boolean> {
  const parsed = parseImportedHash(encoded);
  shared ??= createVerifierPool();
  try {
    return (await shared.verify(encoded, password, signal, isCostly(parsed, Buffer.byteLength(password)) ? { owner } : undefined)).matches;
  } catch (error) {
    if (error instanceof VerifierBusyError) throw new DomainError("resource_exhausted", "password_verify.busy", "too many password verifications in progress, retry later");
    if (error instanceof VerifierClosedError) throw new DomainError("unavailable", "password_verify.closed", "the server is shutting down");
    throw error;
  }
}

/**
 * Ends the verifier threads (server shutdown). Verifications still waiting or running fail with
 * unavailable; a later verifyImportedHash starts a fresh pool, so a process may start and stop
 * several servers.
 */
export async function closeImportedHashVerifier(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}
