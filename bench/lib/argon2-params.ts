import { ARGON2ID_DEFAULT } from "../../src/support/password-hash.js";

/**
 * Gatehouse's argon2id parameters as @node-rs/argon2 takes them, from the constant every password Gatehouse sets is
 * hashed with (src/support/password-hash.ts), so the bare loop always hashes exactly like CreateHumanUser does.
 * `algorithm: 2` is Argon2id (a const enum that verbatimModuleSyntax cannot import).
 */
export function gatehouseArgon2Options(): Record<string, number> {
  return { algorithm: 2, memoryCost: ARGON2ID_DEFAULT.memoryKiB, timeCost: ARGON2ID_DEFAULT.iterations, parallelism: ARGON2ID_DEFAULT.parallelism };
}
