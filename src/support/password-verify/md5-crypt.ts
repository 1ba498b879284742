import { createHash } from "node:crypto";
import { cryptBase64 } from "./crypt-base64.js";

const md5 = (...parts: Buffer[]) => {
  const hash = createHash("md5");
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** md5-crypt (`$1$`, Poul-Henning Kamp's FreeBSD algorithm): the 22-character checksum. */
export function md5Crypt(password: Buffer, salt: string): string {
  // Stryker disable next-line StringLiteral: the parser admits only ./0-9A-Za-z salt characters, which Buffer.from(text, "") (UTF-8) encodes the same
  const s = Buffer.from(salt, "ascii");
  let final = md5(password, s, password);
  const ctx = createHash("md5").update(password).update("$1$").update(s);
  // Stryker disable next-line EqualityOperator: at left = 0 the update adds no bytes
  for (let left = password.length; left > 0; left -= 16) ctx.update(final.subarray(0, Math.min(16, left)));
  for (let i = password.length; i > 0; i >>= 1) ctx.update(i & 1 ? Buffer.from([0]) : password.subarray(0, 1));
  final = ctx.digest();
  for (let i = 0; i < 1000; i++) {
    const round = createHash("md5");
    round.update(i & 1 ? password : final);
    if (i % 3) round.update(s);
    if (i % 7) round.update(password);
    round.update(i & 1 ? final : password);
    final = round.digest();
  }
  return cryptBase64(final, [[0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5]], {
    // Stryker disable next-line UnaryOperator: a 2-character tail encodes only its low 12 bits, so its first byte is never read
    bytes: [-1,
      -1, 11],
    chars: 2,
  });
}
