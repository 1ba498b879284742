import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = "v1";

/**
 * Seals secrets at rest with AES-256-GCM under the master key. `context` (for example
 * `idp:<id>:client_secret`) is bound as associated data, so a sealed value copied to another row or
 * field no longer opens (texts are taken as UTF-8). Format: `v1.<base64url(iv | ciphertext | tag)>`.
 */
export function sealSecret(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString("base64url")}`;
}

/** Opens a sealed secret; throws when the key, the context or the bytes do not match. */
export function openSecret(key: Buffer, sealed: string, context: string): string {
  const [version, body] = sealed.split(".");
  if (version !== VERSION || !body) throw new Error("not a sealed secret of a known version");
  const bytes = Buffer.from(body, "base64url");
  const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString("utf8");
}
