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
    ["bcrypt 9", false, { scheme: "bcrypt", cost: 9 } as ImportedHash],
    ["bcrypt 10", true, { scheme: "bcrypt", cost: 10 } as ImportedHash],
    ["scrypt N=2^14 r=8 p=1", false, scrypt(14, 8, 1)],
    ["scrypt N=2^15 r=8 p=1", true, scrypt(15, 8, 1)],
    ["scrypt N=2^14 r=9 p=1", true, scrypt(14, 9, 1)],
    ["scrypt N=2^14 r=8 p=2", true, scrypt(14, 8, 2)],
    ["pbkdf2 50 000 rounds", false, pbkdf2(50_000)],
    ["pbkdf2 50 001 rounds", true, pbkdf2(50_001)],
    ["sha-crypt 37 000 rounds (a 16-byte password)", false, shaCrypt(37_000)],
    ["sha-crypt 38 000 rounds (a 16-byte password)", true, shaCrypt(38_000)],
    ["md5-crypt", false, { scheme: "md5-crypt", salt: "salt", hash: "hash" } as ImportedHash],
  ] as const)("%s: costly %s", (_name, costly, parsed) => {
    expect(isCostly(parsed, 16)).toBe(costly);
  });

  it.each([
    ["sha-crypt 20 000 rounds, a 64-byte password", false, 20_000, 64],
    ["sha-crypt 20 000 rounds, a 65-byte password", true, 20_000, 65],
    ["sha-crypt 5 000 rounds (its default), a 4 KiB password", true, 5_000, 4096],
    ["sha-crypt 1 000 rounds (its least), a 1.5 KiB password (its setup hashes it once per byte)", true, 1_000, 1536],
    ["sha-crypt 1 000 rounds, a 1 KiB password", false, 1_000, 1024],
  ] as const)("%s: costly %s (its work grows with the password)", (_name, costly, rounds, passwordBytes) => {
    expect(isCostly(shaCrypt(rounds), passwordBytes)).toBe(costly);
  });

  it("other schemes' work does not grow with the password", () => {
    expect(isCostly({ scheme: "md5-crypt", salt: "salt", hash: "hash" }, 4096)).toBe(false);
    expect(isCostly(argon2(19_456, 2), 4096)).toBe(false);
    expect(isCostly({ scheme: "bcrypt", cost: 9 }, 4096)).toBe(false);
  });
});
