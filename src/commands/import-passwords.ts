import { availableParallelism } from "node:os";
import { DomainError } from "../domain/errors.js";
import { createConcurrencyLimit } from "../support/concurrency-limit.js";
import { hashPassword } from "../support/password-hash.js";
import { verifyImportedHash } from "../support/password-verify/verify.js";

/**
 * The password hashing of bulk imports, server-wide: at most one argon2id per core at once. A chunk of a
 * thousand plain passwords would otherwise queue a thousand 19 MiB hashes on libuv's pool (4 threads), where the disk
 * syncs that make every other write durable wait behind them; limited, the pool keeps threads for them and an import
 * still uses every core. Never on the event loop: argon2id runs on libuv's threads, verification on the verifier pool.
 */
const limit = createConcurrencyLimit(availableParallelism());

/**
 * argon2id of an imported user's plain password, with the parameters of every password Gatehouse sets. `signal` is the
 * import call's: once it ends, its hashes still waiting never run (the promise rejects with the signal's reason).
 */
export function hashImportedPassword(password: string, signal?: AbortSignal): Promise<string> {
  return limit(() => hashPassword(password), signal);
}

/**
 * The re-imports' verifications, per organization: at most one per core at once for each (the verifier pool bounds
 * them all). Not under the hashing limit, and not one limit for all: one organization's stored hashes may cost seconds
 * each, and every other organization's import would wait behind them. An organization leaves the map when its last
 * verification ends.
 */
const verificationLimits = new Map<string, { limit: ReturnType<typeof createConcurrencyLimit>; users: number }>();

async function underOrganizationLimit<T>(orgId: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  let entry = verificationLimits.get(orgId);
  if (!entry) verificationLimits.set(orgId, (entry = { limit: createConcurrencyLimit(availableParallelism()), users: 0 }));
  entry.users++;
  try {
    return await entry.limit(task, signal);
  } finally {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,UpdateOperator: forgetting an idle organization only keeps the map small; a kept entry's limit is free again
    if (--entry.users === 0) verificationLimits.delete(orgId);
  }
}

/**
 * Whether `password` is the one `storedHash` was made from (a re-import sending the same plain password changes
 * nothing). A stored hash the verifier refuses to read counts as another password, so the new one replaces it. `orgId`
 * is the user's organization (see verificationLimits).
 */
export function isStoredPassword(storedHash: string, password: string, orgId: string, signal?: AbortSignal): Promise<boolean> {
  return underOrganizationLimit(
    orgId,
    () =>
      verifyImportedHash(storedHash, password, signal, orgId).catch((error: unknown) => {
        if (error instanceof DomainError && error.kind === "invalid_argument") return false;
        throw error;
      }),
    signal,
  );
}
