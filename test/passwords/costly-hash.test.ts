import { describe, expect, it } from "vitest";
import type { ImportedHash } from "../../src/domain/imported-hash.js";
import { isCostly } from "../../src/domain/password-hash.js";

/**
 * Which stored hashes the verifier runs in its costly lane (src/domain/password-hash.ts isCostly; README "One
 * organization's hashes cannot hold everyone's sign-ins"): those that cost clearly more to check than a default
 * argon2id (19 MiB, 2 iterations). Each scheme's bound, at its edge.
 */
const salt = Buffer.alloc(16);
const hash = Buffer.alloc(32);
const argon2 = (memoryKiB: number, iterations: number): ImportedHash => ({ scheme: "argon2", variant: "argon2id", memoryKiB, iterations, parallelism: 1, salt, hash });
const scrypt = (log2N: number, r: number, p: number): ImportedHash => ({ scheme: "scrypt", log2N, r, p, salt, hash });
const pbkdf2 = (rounds: number): ImportedHash => ({ scheme: "pbkdf2", digest: "sha256", rounds, salt, hash });
const shaCrypt = (rounds: number): ImportedHash => ({ scheme: "sha-crypt", digest: "sha512", rounds, roundsGiven: true, salt: "salt", hash: "hash" });

describe("a costly stored hash", () => {
  it.each([
    ["argon2id at the default", false, argon2(19_456, 2)],
    ["argon2id with more memory", true, argon2(19_457, 2)],
    ["argon2id with more iterations", true, argon2(19_456, 3)],
    ["argon2id with less memory and more iterations, as much work", false, argon2(9_728, 4)],
    ["bcrypt 10", false, { scheme: "bcrypt", cost: 10 } as ImportedHash],
    ["bcrypt 11", true, { scheme: "bcrypt", cost: 11 } as ImportedHash],
    ["scrypt N=2^14 r=8 p=1", false, scrypt(14, 8, 1)],
    ["scrypt N=2^15 r=8 p=1", true, scrypt(15, 8, 1)],
    ["scrypt N=2^14 r=9 p=1", true, scrypt(14, 9, 1)],
    ["scrypt N=2^14 r=8 p=2", true, scrypt(14, 8, 2)],
    ["pbkdf2 100 000 rounds", false, pbkdf2(100_000)],
    ["pbkdf2 100 001 rounds", true, pbkdf2(100_001)],
    ["sha-crypt 20 000 rounds", false, shaCrypt(20_000)],
    ["sha-crypt 20 001 rounds", true, shaCrypt(20_001)],
    ["md5-crypt", false, { scheme: "md5-crypt", salt: "salt", hash: "hash" } as ImportedHash],
  ] as const)("%s: costly %s", (_name, costly, parsed) => {
    expect(isCostly(parsed)).toBe(costly);
  });
});
