import { hash, randomBytes, timingSafeEqual } from "node:crypto";

/** A random string of `bytes` bytes from the CSPRNG, base64url encoded. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/**
 * SHA-256 of a high-entropy secret (tokens), of its UTF-8 bytes, hex encoded. Not for passwords. Every authenticated
 * call hashes its token's secret: the one-shot `hash` costs about a third of a Hash object's create, update, digest.
 */
export function sha256Hex(value: string): string {
  return hash("sha256", value); // hex, the default encoding of its digest
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
