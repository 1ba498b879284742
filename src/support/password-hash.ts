import { hash as argon2Hash } from "@node-rs/argon2";

/**
 * The argon2id parameters of every password Gatehouse sets: OWASP's baseline (19 MiB, 2 iterations, 1 lane) — slow
 * for attackers, ~50 ms here. A stored hash weaker than this is replaced at the next right sign-in.
 */
export const ARGON2ID_DEFAULT = { memoryKiB: 19_456, iterations: 2, parallelism: 1 } as const;

// `algorithm: 2` is Algorithm.Argon2id (a const enum that verbatimModuleSyntax cannot import).
const OPTIONS = { algorithm: 2, memoryCost: ARGON2ID_DEFAULT.memoryKiB, timeCost: ARGON2ID_DEFAULT.iterations, parallelism: ARGON2ID_DEFAULT.parallelism };

/** argon2id of `password` with the default parameters, computed on libuv's thread pool (never on the event loop). */
export function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, OPTIONS);
}
