import { createHmac, hkdfSync } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { constantTimeEqual } from "../support/crypto.js";

/**
 * Cross-site request forgery. The pages have no session and no cookie: the code in the form is the credential, so a
 * forged post cannot borrow anything from the victim's browser. What a forged post could still do is spend the user's
 * attempts or their new-code allowance from another site. Two guards, each enough for the browsers it covers:
 *
 * 1. Fetch metadata and Origin (every current browser): a post must come from Gatehouse's own pages. A browser that
 *    sends `Sec-Fetch-Site` must say `same-origin`; an `Origin` it sends must be GATEHOUSE_EXTERNAL_URL's origin.
 *    Because the pages send `Referrer-Policy: no-referrer`, browsers send `Origin: null` on their own form posts
 *    (Fetch: a no-referrer request serializes its origin as null), so `null` passes only together with
 *    `Sec-Fetch-Site: same-origin`. A client sending neither header (curl, a very old browser) is left to guard 2.
 * 2. A form token: HMAC-SHA256, under a key derived from the master key, of the form, the user and the id of the code
 *    the page was rendered for. Only Gatehouse can make one, so a post from a page it did not render for this link is
 *    refused; and a token dies with its code (a new code has a new id), so a page left open across "send me a new
 *    code" cannot post into the new code. It is not a secret of the user: the page shows it to whoever opens the link.
 */
export type FormName = "verification" | "init";

function tokenKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), "gatehouse page form token", 32));
}

/** The token a form of `form` for the user's code `codeId` (undefined: the user has no code of that kind) carries. */
export function formToken(masterKey: Buffer, form: FormName, userId: string, codeId: string | undefined): string {
  return createHmac("sha256", tokenKey(masterKey)).update(`${form}\n${userId}\n${codeId ?? "-"}`).digest("base64url");
}

/** Whether `token` is the one formToken makes for these values, compared in constant time. */
export function checkFormToken(masterKey: Buffer, form: FormName, userId: string, codeId: string | undefined, token: string): boolean {
  return constantTimeEqual(formToken(masterKey, form, userId, codeId), token);
}

/** Guard 1: whether the browser's own headers say the post came from a page of `externalOrigin`. */
export function isSameOriginPost(headers: IncomingHttpHeaders, externalOrigin: string): boolean {
  const site = headers["sec-fetch-site"];
  const origin = headers.origin;
  if (site !== undefined && site !== "same-origin") return false;
  if (origin === undefined) return true;
  if (origin === "null") return site === "same-origin";
  return origin === externalOrigin;
}
