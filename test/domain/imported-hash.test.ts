import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { parseImportedHash } from "../../src/domain/imported-hash.js";
import { thrownBy } from "../support/thrown.js";

/**
 * The structure rules of imported password hashes (API.md "Create user": hashedPassword.value is a
 * supported Modular Crypt / PHC string, else a field violation). The parameter limits are in
 * test/passwords/imported-hash-limits.test.ts, verification against real hashes in imported-hash.test.ts.
 * Base hashes are passlib's (test/fixtures/password-hashes/hashes.json).
 */
const bcrypt = "$2b$05$v4VK8DHu2hRGUbwrODUFF.VTgUi6wKA0HNdn8aTcwob6kMFDBX0xq";
const argon2 = "$argon2id$v=19$m=1024,t=2,p=1$j9HaO6d0bm0tJYRwDuE8pw$7cyIyG6FY5rl8Y7VsS4eUQ";
const scrypt = "$scrypt$ln=10,r=8,p=1$M2aMUQpBaG2t1RpjzDkHwA$2xVOTD7UarbdxzIuOmLeUf6HTXUgFAw8S42DKvBWBxA";
const pbkdf2 = "$pbkdf2-sha256$2000$lVIqBSAkZOx9b.09Z0xpTQ$4ipEChnqIFf8D0tVFrdyN08oxG1VYibOvHczZXOEUXo";
const pbkdf2Sha1 = "$pbkdf2$2000$bk2J0ZrTOodQSskZQwjh3A$nUIWcBdTpKSlaMfexly7qJ3V66Y";
const sha256Crypt = "$5$saltsaltsaltsalt$mjqXtNIIi3yiBeHtOLHkfrtXWmwfw37Iy/wd6ra1iP0";
const sha512Crypt = "$6$rounds=1000$lODWK.UjaV2sPEeT$X2.1lbljGOQ9YAXIL./VA7y9z67tbv93bkf.qS4rHwoqOdjXEW2QwxzC9.ZH8r.3cZZSj6a4XfR1xg6u/kDMl.";
const md5Crypt = "$1$OVBCXiam$Q.bsPqxOgSp5xyN4XdENl1";

/** Standard base64 without padding, as PHC strings write it. */
const b64 = (bytes: number, fill = 7) => Buffer.alloc(bytes, fill).toString("base64").replace(/=+$/, "");
const argon2With = (salt: string, hash: string, params = "v=19$m=1024,t=2,p=1") => `$argon2id$${params}$${salt}$${hash}`;

const refusal = (value: string): DomainError => thrownBy(DomainError, () => parseImportedHash(value));

/** The field violation of a malformed hash, whose description says what is wrong. */
function malformed(value: string): string {
  const error = refusal(value);
  expect(error).toMatchObject({ kind: "invalid_argument", reason: "hashed_password.malformed" });
  expect(error.violations).toEqual([{ field: "hashed_password.value", rule: "hashed_password.malformed", description: expect.any(String) }]);
  const description = error.violations[0]!.description;
  expect(error.message).toContain(description);
  return description;
}

describe("imported hashes: what parsing returns", () => {
  it("reads the parameters a later sign-in verifies with", () => {
    expect(parseImportedHash(bcrypt)).toEqual({ scheme: "bcrypt", cost: 5 });
    expect(parseImportedHash(argon2)).toEqual({
      scheme: "argon2", variant: "argon2id", memoryKiB: 1024, iterations: 2, parallelism: 1,
      salt: Buffer.from("j9HaO6d0bm0tJYRwDuE8pw", "base64"), hash: Buffer.from("7cyIyG6FY5rl8Y7VsS4eUQ", "base64"),
    });
    expect(parseImportedHash(scrypt)).toMatchObject({ scheme: "scrypt", log2N: 10, r: 8, p: 1 });
    expect(parseImportedHash(pbkdf2)).toMatchObject({ scheme: "pbkdf2", digest: "sha256", rounds: 2000, salt: Buffer.from("lVIqBSAkZOx9b+09Z0xpTQ", "base64") });
    expect(parseImportedHash(pbkdf2Sha1)).toMatchObject({ scheme: "pbkdf2", digest: "sha1" });
    expect(parseImportedHash(md5Crypt)).toEqual({ scheme: "md5-crypt", salt: "OVBCXiam", hash: "Q.bsPqxOgSp5xyN4XdENl1" });
  });

  it("sha-crypt without rounds= uses the scheme's default of 5000, and says the rounds were not given", () => {
    expect(parseImportedHash(sha256Crypt)).toEqual({ scheme: "sha-crypt", digest: "sha256", rounds: 5000, roundsGiven: false, salt: "saltsaltsaltsalt", hash: sha256Crypt.slice(-43) });
    expect(parseImportedHash(sha512Crypt)).toMatchObject({ scheme: "sha-crypt", digest: "sha512", rounds: 1000, roundsGiven: true });
  });

  it("argon2 strings of version 16 (0x10), 19 (0x13) or without a version are accepted, others are not", () => {
    for (const version of ["v=16$", "v=19$", ""]) expect(parseImportedHash(argon2.replace("v=19$", version))).toMatchObject({ scheme: "argon2" });
    expect(malformed(argon2.replace("v=19", "v=18"))).toMatch(/argon2.*version/);
  });
});

describe("imported hashes: refused schemes", () => {
  it.each(["$pbkdf2-sha384$2000$c2FsdA$aGFzaA", "$7$C6..../....SodiumChloride$kBGj9fHznVYFQMEn/qDCfrDevf9YDtcDdKvEqHJLV8D", "", "$"])("%j is unsupported, naming the supported schemes", (value) => {
    const error = refusal(value);
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "hashed_password.unsupported" });
    expect(error.violations).toEqual([{ field: "hashed_password.value", rule: "hashed_password.unsupported", description: expect.stringMatching(/bcrypt.*argon2.*scrypt.*pbkdf2.*crypt/) }]);
    expect(error.message).not.toBe("");
  });
});

describe("imported hashes: the whole string is the hash", () => {
  it.each([
    ["bcrypt", bcrypt, /bcrypt.*\$2b\$/],
    ["argon2", argon2, /argon2.*\$argon2id\$/],
    ["scrypt", scrypt, /scrypt.*\$scrypt\$/],
    ["pbkdf2", pbkdf2, /pbkdf2.*\$pbkdf2-sha256\$/],
    ["sha-crypt", sha512Crypt, /sha-crypt.*\$6\$/],
    ["md5-crypt", md5Crypt, /md5-crypt.*\$1\$/],
  ])("%s: text after or before the hash is malformed, and the description shows the expected form", (_scheme, hash, expectedForm) => {
    expect(malformed(`${hash}$extra`)).toMatch(expectedForm);
    expect(malformed(`${hash}x`)).not.toBe("");
    const prefix = /^\$[^$]+\$/.exec(hash)![0];
    expect(malformed(`${prefix}junk${hash}`)).not.toBe("");
  });

  it("sha256-crypt names its own form and length", () => {
    expect(malformed(`${sha256Crypt}x`)).toMatch(/\$5\$.*43/);
  });

  it("a structurally incomplete string is malformed, naming the scheme and its expected form", () => {
    expect(malformed("$argon2id$v=19$m=1024,t=2$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA")).toMatch(/^argon2: expected .*\$argon2id\$/);
    expect(malformed("$scrypt$ln=10,r=8$c2FsdA$aGFzaA")).toMatch(/^scrypt: expected .*\$scrypt\$/);
    expect(malformed("$pbkdf2-sha256$$c2FsdA$aGFzaA")).toMatch(/^pbkdf2: expected .*\$pbkdf2-sha256\$/);
    expect(malformed("$2b$5$" + "a".repeat(53))).toMatch(/^bcrypt: expected .*\$2b\$/);
  });

  it("an out-of-range parameter is named with its scheme", () => {
    expect(malformed(bcrypt.replace("$05$", "$03$"))).toMatch(/^bcrypt: cost\b/);
    expect(malformed(argon2.replace("t=2", "t=0"))).toMatch(/^argon2: t\b/);
    expect(malformed(argon2.replace("p=1", "p=0"))).toMatch(/^argon2: p\b/);
    expect(malformed(scrypt.replace("ln=10", "ln=0"))).toMatch(/^scrypt: ln\b/);
    expect(malformed(scrypt.replace("r=8", "r=0"))).toMatch(/^scrypt: r\b/);
    expect(malformed(scrypt.replace("r=8", "r=33").replace("ln=10", "ln=1"))).toMatch(/^scrypt: r\b/);
    expect(malformed(scrypt.replace("p=1", "p=0"))).toMatch(/^scrypt: p\b/);
    expect(malformed(scrypt.replace("ln=10", "ln=19"))).toMatch(/^scrypt: memory\b/);
    expect(malformed(pbkdf2.replace("$2000$", "$999$"))).toMatch(/^pbkdf2: rounds\b/);
    expect(malformed(sha512Crypt.replace("rounds=1000", "rounds=999"))).toMatch(/^sha-crypt: rounds\b/);
  });

  it("argon2 needs at least 8 KiB of memory per lane", () => {
    expect(parseImportedHash(argon2.replace("m=1024,t=2,p=1", "m=16,t=2,p=2"))).toMatchObject({ memoryKiB: 16, parallelism: 2 });
    expect(malformed(argon2.replace("m=1024,t=2,p=1", "m=15,t=2,p=2"))).toMatch(/^argon2: m must be from 16\b/);
  });
});

describe("imported hashes: salts and digests are canonical base64 of a sane length", () => {
  it("argon2 salts take 8 to 1024 bytes and hashes 16 to 64 bytes", () => {
    for (const [salt, hash] of [[8, 16], [1024, 64]]) expect(() => parseImportedHash(argon2With(b64(salt!), b64(hash!)))).not.toThrow();
    expect(malformed(argon2With(b64(7), b64(16)))).toMatch(/^argon2: salt must be 8 to 1024 bytes/);
    expect(malformed(argon2With(b64(1025), b64(16)))).toMatch(/^argon2: salt must be 8 to 1024 bytes/);
    expect(malformed(argon2With(b64(8), b64(15)))).toMatch(/^argon2: hash must be 16 to 64 bytes/);
    expect(malformed(argon2With(b64(8), b64(65)))).toMatch(/^argon2: hash must be 16 to 64 bytes/);
  });

  it("scrypt's checksum is exactly 32 bytes and its salt at least 4", () => {
    const scryptWith = (salt: string, hash: string) => `$scrypt$ln=10,r=8,p=1$${salt}$${hash}`;
    expect(() => parseImportedHash(scryptWith(b64(4), b64(32)))).not.toThrow();
    expect(malformed(scryptWith(b64(3), b64(32)))).toMatch(/^scrypt: salt must be 4\b/);
    for (const length of [31, 33]) expect(malformed(scryptWith(b64(4), b64(length)))).toMatch(/^scrypt: hash must be 32 to 32 bytes/);
  });

  it("a pbkdf2 digest has its algorithm's length, whatever the other algorithms' lengths", () => {
    expect(malformed(`$pbkdf2-sha256$2000$c2FsdA$${b64(20)}`)).toMatch(/^pbkdf2: hash must be 32 to 32 bytes/);
    expect(malformed(`$pbkdf2-sha512$2000$c2FsdA$${b64(32)}`)).toMatch(/^pbkdf2: hash must be 64 to 64 bytes/);
    expect(malformed(`$pbkdf2$2000$c2FsdA$${b64(32)}`)).toMatch(/^pbkdf2: hash must be 20 to 20 bytes/);
    expect(malformed(`$pbkdf2-sha256$2000$${b64(3)}$${b64(32)}`)).toMatch(/^pbkdf2: salt must be 4\b/);
  });

  it("characters outside the scheme's alphabet are refused even where a lenient decoder would read them", () => {
    const salt = "j9HaO6d0bm0tJYRwDuE8pw";
    // PHC strings use standard base64: "+" is allowed, passlib's "." is not.
    expect(() => parseImportedHash(argon2With(salt.replace("t", "+"), "7cyIyG6FY5rl8Y7VsS4eUQ"))).not.toThrow();
    expect(malformed(argon2With(salt.replace("t", "."), "7cyIyG6FY5rl8Y7VsS4eUQ"))).toMatch(/^argon2: salt is not valid base64/);
    // passlib's pbkdf2 strings use "ab64": "." stands for "+", and "+" itself is not allowed.
    expect(malformed(pbkdf2.replace("b.09", "b+09"))).toMatch(/^pbkdf2: salt is not valid base64/);
    // Characters a lenient decoder skips, and base64url.
    expect(malformed(argon2With(`${salt.slice(0, 10)}!${salt.slice(10)}`, "7cyIyG6FY5rl8Y7VsS4eUQ"))).toMatch(/salt is not valid base64/);
    expect(malformed(argon2With(salt.replace("t", "-"), "7cyIyG6FY5rl8Y7VsS4eUQ"))).toMatch(/salt is not valid base64/);
  });

  it("non-canonical base64 (set bits past the last byte) is refused", () => {
    // 22 characters carry 132 bits for 16 bytes: the last character's low 4 bits must be zero ("w", not "x").
    expect(malformed(argon2With("j9HaO6d0bm0tJYRwDuE8px", "7cyIyG6FY5rl8Y7VsS4eUQ"))).toMatch(/^argon2: salt is not valid base64/);
    expect(malformed(argon2With("j9HaO6d0bm0tJYRwDuE8pw", "7cyIyG6FY5rl8Y7VsS4eUR"))).toMatch(/^argon2: hash is not valid base64/);
    // Padding is not part of PHC strings.
    expect(malformed(argon2With("j9HaO6d0bm0tJYRwDuE8pw==", "7cyIyG6FY5rl8Y7VsS4eUQ"))).toMatch(/salt is not valid base64/);
  });
});
