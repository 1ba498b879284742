import { availableParallelism } from "node:os";
import { DomainError } from "../domain/errors.js";
import { createConcurrencyLimit } from "../support/concurrency-limit.js";
import { hashPassword } from "../support/password-hash.js";
import { verifyImportedHash } from "../support/password-verify/verify.js";

/**
 * The password work of bulk imports, server-wide: at most one argon2id (or verification) per core at once. A chunk of a
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
 * Whether `password` is the one `storedHash` was made from (a re-import sending the same plain password changes
 * nothing). A stored hash the verifier refuses to read counts as another password, so the new one replaces it. `orgId`
 * is the user's organization: its re-imports share the verifier pool's workers as its users' sign-ins do.
 */
export function isStoredPassword(storedHash: string, password: string, orgId: string, signal?: AbortSignal): Promise<boolean> {
  return limit(() =>
    verifyImportedHash(storedHash, password, signal, orgId).catch((error: unknown) => {
      if (error instanceof DomainError && error.kind === "invalid_argument") return false;
      throw error;
    }),
    signal,
  );
}
