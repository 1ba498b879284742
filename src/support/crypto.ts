import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A random string of `bytes` bytes from the CSPRNG, base64url encoded. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** SHA-256 of a high-entropy secret (tokens), of its UTF-8 bytes, hex encoded. Not for passwords. */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Compares two strings (their UTF-8 bytes) in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  // timingSafeEqual needs equal lengths; compare against itself to spend the same time either way.
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
