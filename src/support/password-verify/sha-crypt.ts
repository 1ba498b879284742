import { createHash } from "node:crypto";
import { cryptBase64 } from "./crypt-base64.js";

type Digest = "sha256" | "sha512";

/** Byte order of the final encoding (Ulrich Drepper's SHA-crypt specification). */
const ORDER: Record<Digest, { groups: [number, number, number][]; tail: { bytes: number[]; chars: number } }> = {
  sha256: {
    groups: [[0, 10, 20], [21, 1, 11], [12, 22, 2], [3, 13, 23], [24, 4, 14], [15, 25, 5], [6, 16, 26], [27, 7, 17], [18, 28, 8], [9, 19, 29]],
    tail: { bytes: [-1, 31, 30], chars: 3 },
  },
  sha512: {
    groups: [
      [0, 21, 42], [22, 43, 1], [44, 2, 23], [3, 24, 45], [25, 46, 4], [47, 5, 26], [6, 27, 48], [28, 49, 7], [50, 8, 29], [9, 30, 51], [31, 52, 10],
      [53, 11, 32], [12, 33, 54], [34, 55, 13], [56, 14, 35], [15, 36, 57], [37, 58, 16], [59, 17, 38], [18, 39, 60], [40, 61, 19], [62, 20, 41],
    ],
    tail: { bytes: [-1, -1, 63], chars: 2 },
  },
};

/** Bytes of `source` repeated to exactly `length` bytes. */
function stretch(source: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  // Stryker disable next-line MethodExpression,ArithmeticOperator,EqualityOperator: Buffer#copy itself stops at the end of both buffers, so a larger end copies the same bytes, and at i = length copies none
  for (let i = 0; i < length; i += source.length) source.copy(out, i, 0, Math.min(source.length, length - i));
  return out;
}

/** sha256-crypt (`$5$`) / sha512-crypt (`$6$`): the checksum for a password, salt and round count. */
export function shaCrypt(digest: Digest, password: Buffer, salt: string, rounds: number): string {
  const size = digest === "sha256" ? 32 : 64;
  // Stryker disable next-line StringLiteral: the parser admits only ./0-9A-Za-z salt characters, which Buffer.from(text, "") (UTF-8) encodes the same
  const s = Buffer.from(salt, "ascii");
  const b = createHash(digest).update(password).update(s).update(password).digest();
  const a = createHash(digest).update(password).update(s);
  // Stryker disable next-line EqualityOperator: at left = 0 the update adds no bytes
  for (let left = password.length; left > 0; left -= size) a.update(b.subarray(0, Math.min(size, left)));
  for (let i = password.length; i > 0; i >>= 1) a.update(i & 1 ? b : password);
  let c = a.digest();
  const dp = createHash(digest);
  for (let i = 0; i < password.length; i++) dp.update(password);
  const p = stretch(dp.digest(), password.length);
  const ds = createHash(digest);
  for (let i = 0; i < 16 + c[0]!; i++) ds.update(s);
  const sBytes = stretch(ds.digest(), s.length);
  for (let r = 0; r < rounds; r++) {
    const round = createHash(digest);
    round.update(r & 1 ? p : c);
    if (r % 3) round.update(sBytes);
    if (r % 7) round.update(p);
    round.update(r & 1 ? c : p);
    c = round.digest();
  }
  return cryptBase64(c, ORDER[digest].groups, ORDER[digest].tail);
}
