import { verify as argon2Verify } from "@node-rs/argon2";
import bcrypt from "bcryptjs";
import { pbkdf2, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { parseImportedHash } from "../../domain/imported-hash.js";
import { constantTimeEqual } from "../crypto.js";
import { md5Crypt } from "./md5-crypt.js";
import { shaCrypt } from "./sha-crypt.js";

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (password: Buffer, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;

const equalBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

/**
 * Whether `password` matches an imported hash in any scheme parseImportedHash accepts.
 * One branch per scheme; every comparison is constant-time. Sign-in, which comes later, uses it.
 */
export async function verifyImportedHash(encoded: string, password: string): Promise<boolean> {
  const parsed = parseImportedHash(encoded);
  const secret = Buffer.from(password, "utf8");
  switch (parsed.scheme) {
    case "bcrypt":
      // $2y$ (PHP) and $2a$ are the same algorithm as $2b$ for every password bcryptjs accepts.
      return bcrypt.compare(password, `$2b$${encoded.slice(4)}`);
    case "argon2":
      return argon2Verify(encoded, password);
    case "scrypt": {
      const N = 2 ** parsed.log2N;
      const derived = await scryptAsync(secret, parsed.salt, parsed.hash.length, { N, r: parsed.r, p: parsed.p, maxmem: 256 * N * parsed.r + 1024 * 1024 });
      return equalBytes(derived, parsed.hash);
    }
    case "pbkdf2":
      return equalBytes(await pbkdf2Async(secret, parsed.salt, parsed.rounds, parsed.hash.length, parsed.digest), parsed.hash);
    case "sha-crypt":
      return constantTimeEqual(shaCrypt(parsed.digest, secret, parsed.salt, parsed.rounds), parsed.hash);
    case "md5-crypt":
      return constantTimeEqual(md5Crypt(secret, parsed.salt), parsed.hash);
  }
}
