import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { checkImportedHash } from "../../src/support/password-verify/check-hash.js";

// checkImportedHash called in the test's own thread: every scheme's branch, against hashes made by
// implementations independent of Gatehouse (the server runs the same function on a worker thread).

const fixtures = JSON.parse(readFileSync(new URL("../fixtures/password-hashes/hashes.json", import.meta.url), "utf8")) as {
  password: string;
  hashes: { scheme: string; source: string; hash: string }[];
};
const hashOf = (scheme: string) => fixtures.hashes.find((f) => f.scheme === scheme)!.hash;

/** Python's hashlib.scrypt (OpenSSL), at the edges of what the parser accepts. */
const scryptVectors = [
  // The smallest accepted cost: N = 2, r = 1, p = 1, password "password", salt "NaCl".
  { name: "the smallest accepted cost (ln=1, r=1, p=1)", hash: "$scrypt$ln=1,r=1,p=1$TmFDbA$ovY7jAYtMmCRlEGJuutmWwcskBd16OgbE3brxXKheEk", password: "password" },
  // RFC 7914's second test vector (first 32 of its 64 bytes): N = 1024, r = 8, p = 16.
  { name: "RFC 7914's vector (ln=10, r=8, p=16)", hash: "$scrypt$ln=10,r=8,p=16$TmFDbA$/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWI", password: "password" },
  // The largest accepted block size: r = 32 (memory 128·r·N = 4 MiB).
  { name: "the largest accepted block size (ln=10, r=32, p=1)", hash: "$scrypt$ln=10,r=32,p=1$c2FsdHNhbHQ$xAX+RhedpSAF6zZXQBWfdfNUz0RE/f7zJt7NWwqOJnI", password: "Corr3ct horse" },
];

function refusal(hash: string, password = fixtures.password): DomainError {
  try {
    checkImportedHash(hash, password);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error(`${hash} was accepted`);
}

describe("checkImportedHash in this thread, every scheme", () => {
  it.each(fixtures.hashes.map((f) => [`${f.scheme} (${f.source})`, f.hash] as const))("%s: the password matches; a longer, a shorter and an empty one do not", (_name, hash) => {
    expect(checkImportedHash(hash, fixtures.password)).toBe(true);
    expect(checkImportedHash(hash, `${fixtures.password}x`)).toBe(false);
    expect(checkImportedHash(hash, fixtures.password.slice(0, -1))).toBe(false);
    expect(checkImportedHash(hash, "")).toBe(false);
  });

  it("reads the password as UTF-8 (the fixtures' password has an en dash)", () => {
    const latin1Twin = Buffer.from(fixtures.password, "utf8").toString("latin1");
    for (const scheme of ["pbkdf2-sha256", "scrypt", "sha512-crypt", "md5-crypt"]) expect(checkImportedHash(hashOf(scheme), latin1Twin)).toBe(false);
  });

  it("verifies bcrypt's $2a$ and $2y$ (PHP) like $2b$, with the rest of the string unchanged", () => {
    expect(checkImportedHash(hashOf("bcrypt-2a"), fixtures.password)).toBe(true);
    expect(checkImportedHash(hashOf("bcrypt-2y"), fixtures.password)).toBe(true);
    // The same salt and checksum under another cost is a different hash.
    expect(checkImportedHash(hashOf("bcrypt-2y").replace("$05$", "$04$"), fixtures.password)).toBe(false);
  });

  it.each(scryptVectors.map((v) => [v.name, v] as const))("verifies scrypt at %s", (_name, vector) => {
    expect(checkImportedHash(vector.hash, vector.password)).toBe(true);
    expect(checkImportedHash(vector.hash, `${vector.password}!`)).toBe(false);
  });

  it("verifies pbkdf2 with the hash's own round count", () => {
    const pbkdf2 = hashOf("pbkdf2-sha512");
    expect(checkImportedHash(pbkdf2, fixtures.password)).toBe(true);
    expect(checkImportedHash(pbkdf2.replace("$2000$", "$2001$"), fixtures.password)).toBe(false);
  });

  it("verifies argon2 with the hash's own parameters", () => {
    const argon2 = hashOf("argon2id");
    expect(checkImportedHash(argon2, fixtures.password)).toBe(true);
    expect(checkImportedHash(argon2.replace("t=2", "t=3"), fixtures.password)).toBe(false);
  });
});

describe("checkImportedHash in this thread, broken and foreign hashes", () => {
  it.each([
    ["bcrypt with cost 19, past the limit", hashOf("bcrypt-2b").replace("$05$", "$19$")],
    ["scrypt with a 31-byte checksum", hashOf("scrypt").slice(0, -2)],
    ["scrypt asking for 512 MiB (ln=20, r=4)", hashOf("scrypt").replace("ln=10,r=8", "ln=20,r=4")],
    ["pbkdf2-sha1 with an sha256-sized checksum", hashOf("pbkdf2-sha1").replace(/\$[^$]+$/, "$" + "a".repeat(43))],
    ["argon2 with an empty salt", hashOf("argon2i").replace(/\$[^$]+\$([^$]+)$/, "$$$$$1")],
    ["sha256-crypt with 1 000 001 rounds", "$5$rounds=1000001$salt$" + "a".repeat(43)],
    ["sha512-crypt with a sha256-length checksum", "$6$salt$" + "a".repeat(43)],
    ["md5-crypt with a character outside the crypt alphabet", hashOf("md5-crypt").slice(0, -1) + "+"],
  ])("refuses %s as malformed (invalid_argument on hashed_password.value) before hashing", (_name, hash) => {
    const error = refusal(hash);
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "hashed_password.malformed" });
    expect(error.violations).toEqual([expect.objectContaining({ field: "hashed_password.value", rule: "hashed_password.malformed" })]);
    expect(error.message).not.toContain(fixtures.password);
  });

  it.each([
    ["plain text", "Corr3ct horse"],
    ["argon2d", "$argon2d$v=19$m=1024,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"],
    ["yescrypt", "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o.9agCG9G317fhZg9SqC.5i5rd.RhAtQ7"],
  ])("refuses %s as unsupported", (_name, hash) => {
    expect(refusal(hash)).toMatchObject({ kind: "invalid_argument", reason: "hashed_password.unsupported" });
  });
});
