import { describe, expect, it } from "vitest";
import { countWrongPassword, DEFAULT_LOCKOUT_POLICY } from "../../src/domain/lockout-policy.js";
import { judgeStoredHash } from "../../src/domain/password-hash.js";
import { importedHashes } from "../support/login-client.js";

/** Which stored hashes a right sign-in replaces (user.proto VerifyPassword), and how a wrong password counts. */
describe("judgeStoredHash", () => {
  const salt = "c29tZXNhbHRzb21lc2FsdA";
  const hash = "aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g";
  const argon2id = (params: string, version = "v=19$") => `$argon2id$${version}${params}$${salt}$${hash}`;

  it("replaces every imported scheme but an argon2id at or above the default, and names the scheme", () => {
    const judged = importedHashes.hashes.map((h) => [h.scheme, judgeStoredHash(h.hash)] as const);
    for (const [scheme, verdict] of judged) expect({ scheme, rehash: verdict.rehash }).toEqual({ scheme, rehash: true });
    expect(new Set(judged.map(([, verdict]) => verdict.scheme))).toEqual(new Set(["md5-crypt", "sha-crypt", "bcrypt", "argon2id", "argon2i", "scrypt", "pbkdf2"]));
  });

  it("keeps the default argon2id and stronger ones; replaces less memory, fewer iterations, version 16 or no version", () => {
    expect(judgeStoredHash(argon2id("m=19456,t=2,p=1")).rehash).toBe(false);
    expect(judgeStoredHash(argon2id("m=65536,t=3,p=4")).rehash).toBe(false);
    expect(judgeStoredHash(argon2id("m=19455,t=2,p=1")).rehash).toBe(true);
    expect(judgeStoredHash(argon2id("m=65536,t=1,p=1")).rehash).toBe(true);
    expect(judgeStoredHash(argon2id("m=19456,t=2,p=1", "v=16$")).rehash).toBe(true);
    expect(judgeStoredHash(argon2id("m=19456,t=2,p=1", "")).rehash).toBe(true);
    expect(judgeStoredHash(`$argon2i$v=19$m=65536,t=3,p=1$${salt}$${hash}`)).toEqual({ scheme: "argon2i", rehash: true });
  });
});

describe("countWrongPassword", () => {
  it("locks at the limit (the 10th by default), also when a lowered limit is already passed; 0 never locks", () => {
    expect(countWrongPassword(DEFAULT_LOCKOUT_POLICY, 8)).toEqual({ failedAttempts: 9, lock: false });
    expect(countWrongPassword(DEFAULT_LOCKOUT_POLICY, 9)).toEqual({ failedAttempts: 10, lock: true });
    expect(countWrongPassword({ maxPasswordAttempts: 3 }, 7)).toEqual({ failedAttempts: 8, lock: true });
    expect(countWrongPassword({ maxPasswordAttempts: 1 }, 0)).toEqual({ failedAttempts: 1, lock: true });
    expect(countWrongPassword({ maxPasswordAttempts: 0 }, 500)).toEqual({ failedAttempts: 501, lock: false });
  });
});
