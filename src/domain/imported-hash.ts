import { invalidArgument } from "./errors.js";

/**
 * Password hashes imported from other systems (Modular Crypt Format / PHC strings). Parsing checks
 * the structure and keeps parameters sane: a hash whose cost would take minutes or gigabytes to
 * verify is as bad as a broken one, because every later login would pay for it.
 */
export type ImportedHash =
  | { scheme: "bcrypt"; cost: number }
  | { scheme: "argon2"; variant: "argon2id" | "argon2i"; memoryKiB: number; iterations: number; parallelism: number; salt: Buffer; hash: Buffer }
  | { scheme: "scrypt"; log2N: number; r: number; p: number; salt: Buffer; hash: Buffer }
  | { scheme: "pbkdf2"; digest: "sha1" | "sha256" | "sha512"; rounds: number; salt: Buffer; hash: Buffer }
  | { scheme: "sha-crypt"; digest: "sha256" | "sha512"; rounds: number; roundsGiven: boolean; salt: string; hash: string }
  | { scheme: "md5-crypt"; salt: string; hash: string };

const FIELD = "hashed_password.value";

/**
 * The most one sign-in may have to pay for an imported hash: above what real systems produce
 * (common defaults: bcrypt 10–14, argon2 19–64 MiB, scrypt 16–64 MiB, sha512-crypt up to 656 000
 * rounds, pbkdf2 up to 1 300 000 rounds), yet at most 256 MiB of memory and seconds, not minutes,
 * of one core. Measured at the limits on a 2-core machine: bcrypt 18 ≈ 20 s (bcryptjs), argon2
 * ≈ 1.3 s, scrypt ≈ 0.7 s per unit of p, sha512-crypt ≈ 2.4 s, pbkdf2-sha512 ≈ 3 s. The proto
 * comment on HashedPassword.value states the same ranges.
 */
export const IMPORTED_HASH_LIMITS = {
  bcryptCost: { min: 4, max: 18 },
  argon2: { maxMemoryKiB: 256 * 1024, maxIterations: 16, maxParallelism: 16 },
  scrypt: { maxLog2N: 20, maxR: 32, maxP: 16, maxMemoryBytes: 256 * 1024 * 1024 },
  shaCryptRounds: { min: 1000, max: 1_000_000 },
  pbkdf2Rounds: { min: 1000, max: 5_000_000 },
} as const;
const LIMITS = IMPORTED_HASH_LIMITS;
const CRYPT_CHARS = "[./0-9A-Za-z]";
const B64 = /^[A-Za-z0-9+/]+$/;
const AB64 = /^[A-Za-z0-9./]+$/;

class Malformed extends Error {}

function malformed(scheme: string, problem: string): never {
  throw new Malformed(`${scheme}: ${problem}`);
}

function inRange(scheme: string, name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) malformed(scheme, `${name} must be from ${min} to ${max}`);
  return value;
}

/** Standard base64 without padding (PHC) — or passlib's "ab64", which writes "." for "+". */
function decodeBase64(scheme: string, name: string, text: string, alphabet: RegExp, minBytes: number, maxBytes = 1024): Buffer {
  const standard = text.replaceAll(".", "+");
  const bytes = Buffer.from(standard, "base64");
  // Canonical only: re-encoding must give the same text, so stray or truncated characters are caught.
  // Stryker disable next-line Regex: base64 output has "=" only as trailing padding, so /=+/ strips the same as /=+$/
  if (!alphabet.test(text) || bytes.toString("base64").replace(/=+$/, "") !== standard) malformed(scheme, `${name} is not valid base64`);
  if (bytes.length < minBytes || bytes.length > maxBytes) malformed(scheme, `${name} must be ${minBytes} to ${maxBytes} bytes`);
  return bytes;
}

function parseBcrypt(value: string): ImportedHash {
  const match = /^\$2[aby]\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/.exec(value);
  if (!match) malformed("bcrypt", "expected $2b$<cost>$<22 salt><31 hash characters>");
  return { scheme: "bcrypt", cost: inRange("bcrypt", "cost", Number(match[1]), LIMITS.bcryptCost.min, LIMITS.bcryptCost.max) };
}

function parseArgon2(value: string): ImportedHash {
  const match = /^\$(argon2id|argon2i)\$(?:v=(\d+)\$)?m=(\d+),t=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$/.exec(value);
  if (!match) malformed("argon2", "expected $argon2id$v=19$m=<KiB>,t=<iterations>,p=<lanes>$<salt>$<hash>");
  const [, variant, version, m, t, p, salt, hash] = match as unknown as [string, "argon2id" | "argon2i", string | undefined, string, string, string, string, string];
  if (version !== undefined && version !== "19" && version !== "16") malformed("argon2", "version must be 16 or 19");
  const parallelism = inRange("argon2", "p", Number(p), 1, LIMITS.argon2.maxParallelism);
  return {
    scheme: "argon2",
    variant,
    parallelism,
    memoryKiB: inRange("argon2", "m", Number(m), 8 * parallelism, LIMITS.argon2.maxMemoryKiB),
    iterations: inRange("argon2", "t", Number(t), 1, LIMITS.argon2.maxIterations),
    salt: decodeBase64("argon2", "salt", salt, B64, 8),
    hash: decodeBase64("argon2", "hash", hash, B64, 16, 64),
  };
}

function parseScrypt(value: string): ImportedHash {
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]*)\$([^$]+)$/.exec(value);
  if (!match) malformed("scrypt", "expected $scrypt$ln=<log2 N>,r=<block size>,p=<parallelism>$<salt>$<hash>");
  const log2N = inRange("scrypt", "ln", Number(match[1]), 1, LIMITS.scrypt.maxLog2N);
  const r = inRange("scrypt", "r", Number(match[2]), 1, LIMITS.scrypt.maxR);
  const p = inRange("scrypt", "p", Number(match[3]), 1, LIMITS.scrypt.maxP);
  // scrypt's working memory is 128·r·N bytes; p repeats the work with the same memory.
  if (128 * r * 2 ** log2N > LIMITS.scrypt.maxMemoryBytes) malformed("scrypt", `memory 128·r·N must be at most ${LIMITS.scrypt.maxMemoryBytes / 1024 ** 2} MiB`);
  // RFC 7914: N < 2^(128·r/8). OpenSSL refuses anything else, so such a hash could never be checked.
  if (log2N >= 16 * r) malformed("scrypt", "N must be below 2^(16·r)");
  // passlib's $scrypt$ form always carries a 32-byte checksum.
  return { scheme: "scrypt", log2N, r, p, salt: decodeBase64("scrypt", "salt", match[4]!, B64, 4), hash: decodeBase64("scrypt", "hash", match[5]!, B64, 32, 32) };
}

const PBKDF2_LENGTHS = { sha1: 20, sha256: 32, sha512: 64 } as const;

function parsePbkdf2(value: string): ImportedHash {
  const match = /^\$pbkdf2(?:-(sha1|sha256|sha512))?\$(\d+)\$([^$]+)\$([^$]+)$/.exec(value);
  if (!match) malformed("pbkdf2", "expected $pbkdf2-sha256$<rounds>$<salt>$<hash> (passlib form)");
  const digest = (match[1] ?? "sha1") as keyof typeof PBKDF2_LENGTHS;
  const hash = decodeBase64("pbkdf2", "hash", match[4]!, AB64, PBKDF2_LENGTHS[digest], PBKDF2_LENGTHS[digest]);
  return { scheme: "pbkdf2", digest, rounds: inRange("pbkdf2", "rounds", Number(match[2]), LIMITS.pbkdf2Rounds.min, LIMITS.pbkdf2Rounds.max), salt: decodeBase64("pbkdf2", "salt", match[3]!, AB64, 4), hash };
}

function parseShaCrypt(value: string): ImportedHash {
  const digest = value.startsWith("$5$") ? "sha256" : "sha512";
  const length = digest === "sha256" ? 43 : 86;
  const match = new RegExp(`^\\$[56]\\$(?:rounds=(\\d+)\\$)?(${CRYPT_CHARS}{0,16})\\$(${CRYPT_CHARS}{${length}})$`).exec(value);
  if (!match) malformed("sha-crypt", `expected $${digest === "sha256" ? 5 : 6}$[rounds=<n>$]<salt, up to 16>$<${length} characters>`);
  const roundsGiven = match[1] !== undefined;
  const rounds = roundsGiven ? inRange("sha-crypt", "rounds", Number(match[1]), LIMITS.shaCryptRounds.min, LIMITS.shaCryptRounds.max) : 5000;
  return { scheme: "sha-crypt", digest, rounds, roundsGiven, salt: match[2]!, hash: match[3]! };
}

function parseMd5Crypt(value: string): ImportedHash {
  const match = new RegExp(`^\\$1\\$(${CRYPT_CHARS}{0,8})\\$(${CRYPT_CHARS}{22})$`).exec(value);
  if (!match) malformed("md5-crypt", "expected $1$<salt, up to 8>$<22 characters>");
  return { scheme: "md5-crypt", salt: match[1]!, hash: match[2]! };
}

const parsers: [RegExp, (value: string) => ImportedHash][] = [
  [/^\$2[aby]\$/, parseBcrypt],
  [/^\$argon2(id|i)\$/, parseArgon2],
  [/^\$scrypt\$/, parseScrypt],
  [/^\$pbkdf2(-sha1|-sha256|-sha512)?\$/, parsePbkdf2],
  [/^\$[56]\$/, parseShaCrypt],
  [/^\$1\$/, parseMd5Crypt],
];

/**
 * Parses `hashed_password.value`. Throws invalid_argument with a field violation: reason
 * `hashed_password.unsupported` for a scheme Gatehouse does not verify, `hashed_password.malformed`
 * for a supported scheme whose string or parameters are broken.
 */
export function parseImportedHash(value: string): ImportedHash {
  const parser = parsers.find(([prefix]) => prefix.test(value))?.[1];
  if (!parser) {
    throw invalidArgument("hashed_password.unsupported", "unsupported password hash scheme", [
      { field: FIELD, description: "supported: bcrypt, argon2id/argon2i, scrypt, pbkdf2-sha1/sha256/sha512, sha256/sha512-crypt, md5-crypt", rule: "hashed_password.unsupported" },
    ]);
  }
  try {
    return parser(value);
  } catch (error) {
    // Stryker disable next-line ConditionalExpression: the parsers throw nothing but Malformed, so no other error reaches this guard
    if (!(error instanceof Malformed)) throw error;
    throw invalidArgument("hashed_password.malformed", `malformed password hash: ${error.message}`, [
      { field: FIELD, description: error.message, rule: "hashed_password.malformed" },
    ]);
  }
}
