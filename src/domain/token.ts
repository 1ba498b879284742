import { randomSecret, sha256Hex } from "../support/crypto.js";

/**
 * Personal access tokens look like `gh1.<tokenId>.<secret>`: the id finds the row, the secret's
 * SHA-256 is compared in constant time. The secret has 256 bits of entropy, so a fast hash is enough.
 */
const PREFIX = "gh1";

export interface IssuedToken {
  tokenId: string;
  token: string;
  secretHash: string;
}

export function issueToken(tokenId: string): IssuedToken {
  const secret = randomSecret(32);
  return { tokenId, token: `${PREFIX}.${tokenId}.${secret}`, secretHash: sha256Hex(secret) };
}

export function parseToken(token: string): { tokenId: string; secret: string } | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== PREFIX || !parts[1] || !parts[2]) return undefined;
  return { tokenId: parts[1], secret: parts[2] };
}
