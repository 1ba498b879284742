import { ARGON2ID_DEFAULT } from "../support/password-hash.js";
import { type ImportedHash, parseImportedHash } from "./imported-hash.js";

/** What a stored hash is, for the audit trail (`user.password.rehashed`): its scheme, never the hash. */
export function schemeOf(parsed: ImportedHash): string {
  return parsed.scheme === "argon2" ? parsed.variant : parsed.scheme;
}

/**
 * Whether a stored hash must be replaced by a default argon2id after a right password: every scheme but argon2id,
 * and argon2id weaker than the default (less memory, fewer iterations, or the old version 16). An argon2id at or
 * above the default is kept, imported or not: it is as strong as what a rehash would write, and replacing it would
 * lower what it costs an attacker. Parallelism is not strength (it splits the same memory), so it is not compared.
 */
function needsRehash(parsed: ImportedHash, version19: boolean): boolean {
  // Stryker disable next-line ConditionalExpression: only an argon2 hash has a variant, so the variant's check alone excludes every other scheme (the scheme's is there for the type)
  if (parsed.scheme !== "argon2" || parsed.variant !== "argon2id" || !version19) return true;
  return parsed.memoryKiB < ARGON2ID_DEFAULT.memoryKiB || parsed.iterations < ARGON2ID_DEFAULT.iterations;
}

/** The parsed stored hash and whether it must be replaced (see needsRehash). */
export function judgeStoredHash(encoded: string): { scheme: string; rehash: boolean } {
  const parsed = parseImportedHash(encoded);
  return { scheme: schemeOf(parsed), rehash: needsRehash(parsed, /\$v=19\$/.test(encoded)) };
}

/**
 * Whether checking a stored hash against a password of `passwordBytes` (UTF-8) may cost clearly more than checking a
 * default argon2id (tens of milliseconds): the verifier runs such checks in its costly lane, which never holds every
 * worker (src/support/password-verify). The bounds are each scheme's settings that take about as long as the default:
 * argon2 above its memory × iterations, bcrypt above cost 9, scrypt above N·r·p = 2^14·8 (16 MiB with one lane),
 * pbkdf2 above 50 000 rounds; md5-crypt never. sha-crypt's work grows with the password too (each round hashes it
 * twice, and its setup hashes it once per byte): above the work of 20 000 rounds with a 64-byte password. Common
 * imported settings (bcrypt 10-12, pbkdf2 600 000) are costly, and are replaced by a default argon2id at the first
 * right sign-in.
 */
export function isCostly(parsed: ImportedHash, passwordBytes: number): boolean {
  switch (parsed.scheme) {
    case "argon2":
      return parsed.memoryKiB * parsed.iterations > ARGON2ID_DEFAULT.memoryKiB * ARGON2ID_DEFAULT.iterations;
    case "bcrypt":
      return parsed.cost > 9;
    case "scrypt":
      return 2 ** parsed.log2N * parsed.r * parsed.p > 2 ** 14 * 8;
    case "pbkdf2":
      return parsed.rounds > 50_000;
    case "sha-crypt":
      return shaCryptWork(parsed.rounds, passwordBytes) > shaCryptWork(20_000, 64);
    case "md5-crypt":
      return false;
  }
}

/** sha-crypt's work, in bytes hashed: each round hashes the password twice and an 80-byte digest and salt; the setup, the password once per byte. */
function shaCryptWork(rounds: number, passwordBytes: number): number {
  return rounds * (2 * passwordBytes + 80) + passwordBytes * passwordBytes;
}
