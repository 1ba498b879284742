import { createHmac, hkdfSync, randomInt } from "node:crypto";
import { constantTimeEqual } from "../support/crypto.js";

/**
 * One-time codes: initialization, email verification and passwordless registration. They come from
 * the CSPRNG, are stored only as a keyed hash (HMAC-SHA256 under a key derived from the master key,
 * so a stolen database alone cannot test guesses offline), compared in constant time, used once,
 * expire, and die after five wrong attempts. A new code of a kind replaces the user's previous one.
 */
export type CodeKind = "init" | "email" | "passwordless";

const HOUR = 3_600_000;
export const CODE_RULES: Record<CodeKind, { lifetimeMs: number; length: number }> = {
  init: { lifetimeMs: 72 * HOUR, length: 6 },
  email: { lifetimeMs: HOUR, length: 6 },
  passwordless: { lifetimeMs: HOUR, length: 12 },
};

export const MAX_CODE_ATTEMPTS = 5;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** A fresh code: uniformly random characters (randomInt is unbiased). */
export function generateCode(kind: CodeKind): string {
  let code = "";
  for (let i = 0; i < CODE_RULES[kind].length; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}

/**
 * The digest key of a master key, derived once: the derivation (HKDF, a key object each time) cost more than the
 * rest of a VerifyEmail's checks. Keyed by the master key's buffer, which the server holds for its lifetime.
 */
const digestKeys = new WeakMap<Buffer, Buffer>();
const digestKeyOf = (masterKey: Buffer): Buffer => digestKeys.get(masterKey) ?? deriveDigestKey(masterKey);
function deriveDigestKey(masterKey: Buffer): Buffer {
  const key = Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), "gatehouse one-time code digest", 32));
  // Stryker disable next-line all: a cache; without it every digest derives the same key again
  digestKeys.set(masterKey, key);
  return key;
}

/** The stored form of a code, bound to its kind and id; entry is case-insensitive. */
export function codeDigest(masterKey: Buffer, kind: CodeKind, codeId: string, code: string): string {
  return createHmac("sha256", digestKeyOf(masterKey)).update(`${kind}:${codeId}:${code.trim().toUpperCase()}`).digest("hex");
}

export interface StoredCode {
  id: string;
  kind: CodeKind;
  digest: string;
  expiresAt: number;
  attempts: number;
  usedAt: number | null;
}

export type CodeCheck = "ok" | "invalid" | "used" | "expired" | "exhausted";

/**
 * Judges an attempt. A voided code (five wrong attempts) stays void even for the right code; an
 * expired one too. Every attempt that is not "ok" counts as wrong except on an already void code.
 */
export function checkCode(masterKey: Buffer, stored: StoredCode, candidate: string, now: Date): CodeCheck {
  if (stored.usedAt !== null) return "used";
  if (stored.attempts >= MAX_CODE_ATTEMPTS) return "exhausted";
  if (now.getTime() >= stored.expiresAt) return "expired";
  return constantTimeEqual(codeDigest(masterKey, stored.kind, stored.id, candidate), stored.digest) ? "ok" : "invalid";
}
