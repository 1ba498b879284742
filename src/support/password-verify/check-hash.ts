import { verifySync as argon2VerifySync } from "@node-rs/argon2";
import bcrypt from "bcryptjs";
import { pbkdf2Sync, scryptSync, timingSafeEqual } from "node:crypto";
import { parseImportedHash } from "../../domain/imported-hash.js";
import { constantTimeEqual } from "../crypto.js";
import { md5Crypt } from "./md5-crypt.js";
import { shaCrypt } from "./sha-crypt.js";

const equalBytes = (a: Buffer, b: Buffer) => {
  // Stryker disable next-line ConditionalExpression: every caller derives `a` at b.length bytes; this only keeps timingSafeEqual from throwing
  if (a.length !== b.length) return false;
  return timingSafeEqual(a, b);
};

/**
 * Whether `password` matches an imported hash in any scheme parseImportedHash accepts. Synchronous
 * on purpose: it blocks its thread for up to seconds, so it runs only inside a verifier worker
 * (verify-worker.ts), one job per thread, which is what bounds CPU and memory. One branch per
 * scheme; every comparison is constant-time.
 */
export function checkImportedHash(encoded: string, password: string): boolean {
  const parsed = parseImportedHash(encoded);
  // Stryker disable next-line StringLiteral: Buffer.from(text, "") also reads UTF-8
  const secret = Buffer.from(password, "utf8");
  switch (parsed.scheme) {
    case "bcrypt":
      // $2y$ (PHP) and $2a$ are the same algorithm as $2b$ for every password bcryptjs accepts.
      return bcrypt.compareSync(password, `$2b$${encoded.slice(4)}`);
    case "argon2":
      return argon2VerifySync(encoded, password);
    case "scrypt": {
      const N = 2 ** parsed.log2N;
      // Node refuses more than maxmem; the parser already capped 128·r·N, so allow exactly that plus slack.
      const derived = scryptSync(secret, parsed.salt, parsed.hash.length, { N, r: parsed.r, p: parsed.p, maxmem: 256 * N * parsed.r + 1024 * 1024 });
      return equalBytes(derived, parsed.hash);
    }
    case "pbkdf2":
      return equalBytes(pbkdf2Sync(secret, parsed.salt, parsed.rounds, parsed.hash.length, parsed.digest), parsed.hash);
    case "sha-crypt":
      return constantTimeEqual(shaCrypt(parsed.digest, secret, parsed.salt, parsed.rounds), parsed.hash);
    case "md5-crypt":
      return constantTimeEqual(md5Crypt(secret, parsed.salt), parsed.hash);
  }
}
