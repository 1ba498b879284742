import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { parseImportedHash } from "../../src/domain/imported-hash.js";
import { verifyImportedHash } from "../../src/support/password-verify/verify.js";

/** Made by test/fixtures/password-hashes/make-fixtures.sh with passlib and `openssl passwd`. */
const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};

const schemeOf = (fixture: string) => ({
  "bcrypt-2a": "bcrypt", "bcrypt-2b": "bcrypt", "bcrypt-2y": "bcrypt", argon2id: "argon2", argon2i: "argon2", scrypt: "scrypt",
  "pbkdf2-sha1": "pbkdf2", "pbkdf2-sha256": "pbkdf2", "pbkdf2-sha512": "pbkdf2", "sha256-crypt": "sha-crypt", "sha512-crypt": "sha-crypt", "md5-crypt": "md5-crypt",
})[fixture];

function reasonOf(value: string): string | undefined {
  try {
    parseImportedHash(value);
    return undefined;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    expect(error.violations[0]?.field).toBe("hashed_password.value");
    return error.reason;
  }
}

describe("imported password hashes, against hashes made by independent implementations", () => {
  it("covers every accepted scheme", () => {
    expect(new Set(fixtures.hashes.map((f) => f.scheme))).toEqual(
      new Set(["bcrypt-2a", "bcrypt-2b", "bcrypt-2y", "argon2id", "argon2i", "scrypt", "pbkdf2-sha1", "pbkdf2-sha256", "pbkdf2-sha512", "sha256-crypt", "sha512-crypt", "md5-crypt"]),
    );
  });

  it.each(fixtures.hashes.map((f) => [`${f.scheme} (${f.source})`, f] as const))("%s: parses, verifies the password, rejects another", async (_name, fixture) => {
    expect(parseImportedHash(fixture.hash).scheme).toBe(schemeOf(fixture.scheme));
    expect(await verifyImportedHash(fixture.hash, fixtures.password)).toBe(true);
    expect(await verifyImportedHash(fixture.hash, `${fixtures.password}x`)).toBe(false);
    expect(await verifyImportedHash(fixture.hash, "")).toBe(false);
  });

  it.each(fixtures.hashes.map((f) => [`${f.scheme} (${f.source})`, f.hash] as const))("%s: a truncated string is malformed", (_name, hash) => {
    expect(reasonOf(hash.slice(0, -3))).toBe("hashed_password.malformed");
  });

  const bcrypt = fixtures.hashes.find((f) => f.scheme === "bcrypt-2b")!.hash;
  const argon2 = fixtures.hashes.find((f) => f.scheme === "argon2id")!.hash;
  const pbkdf2 = fixtures.hashes.find((f) => f.scheme === "pbkdf2-sha256")!.hash;
  const scrypt = fixtures.hashes.find((f) => f.scheme === "scrypt")!.hash;
  const sha512 = fixtures.hashes.find((f) => f.source === "passlib sha512_crypt" && f.hash.includes("rounds="))!.hash;

  it.each([
    ["bcrypt cost 3", bcrypt.replace("$05$", "$03$")],
    ["bcrypt cost 32", bcrypt.replace("$05$", "$32$")],
    ["bcrypt with a character outside its alphabet", bcrypt.slice(0, -1) + "!"],
    ["argon2 with bad base64 in the salt", argon2.replace(/\$([^$]+)\$([^$]+)$/, "$!!!!$$$2")],
    ["argon2 asking for 2 GiB", argon2.replace("m=1024", "m=2097152")],
    ["argon2 of an unknown version", argon2.replace("v=19", "v=20")],
    ["pbkdf2 with 999 rounds", pbkdf2.replace("$2000$", "$999$")],
    ["pbkdf2 with a hash of the wrong length", pbkdf2.slice(0, -4)],
    ["scrypt asking for N = 2^21", scrypt.replace("ln=10", "ln=21")],
    ["sha512-crypt with 999 rounds", sha512.replace("rounds=1000", "rounds=999")],
    ["sha512-crypt with a salt over 16 characters", "$6$abcdefghijklmnopq$" + "a".repeat(86)],
  ])("rejects %s as malformed", (_name, value) => {
    expect(reasonOf(value)).toBe("hashed_password.malformed");
  });

  it.each([
    ["plain text", "hunter2"],
    ["LDAP {SSHA}", "{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="],
    ["Django's pbkdf2 form", "pbkdf2_sha256$260000$salt$hash"],
    ["argon2d", "$argon2d$v=19$m=1024,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"],
    ["yescrypt ($y$)", "$y$j9T$salt$hash"],
    ["bcrypt $2x$", "$2x$05$" + "a".repeat(53)],
    ["sun md5", "$md5$rounds=5000$salt$hash"],
  ])("rejects %s as unsupported", (_name, value) => {
    expect(reasonOf(value)).toBe("hashed_password.unsupported");
  });
});
