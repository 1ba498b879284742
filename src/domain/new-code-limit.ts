import { DomainError } from "./errors.js";

/**
 * How often a user may have a new code mailed from the hosted pages ("send me a new code"). The limit protects the
 * user's mailbox (anyone holding an old link can press the button), so it counts every mail that carried a code to
 * the user, whoever caused it: no new one while the newest went less than a minute ago, and at most five in any hour.
 */
export const NEW_CODE_COOLDOWN_MS = 60_000;
export const NEW_CODE_WINDOW_MS = 3_600_000;
export const NEW_CODES_PER_WINDOW = 5;

/**
 * Throws resource_exhausted `code.resend_limited` (metadata `retryAfterSeconds`) unless a new code may be mailed at
 * `now`, given when the earlier code mails to the user were queued (milliseconds, any order).
 */
export function checkNewCodeAllowed(codeMailTimes: readonly number[], now: number): void {
  // Oldest first. Mails older than the window need no filtering out: what decides is the fifth newest, and when it is
  // older than the window its place is free already.
  const sent = [...codeMailTimes].sort((a, b) => a - b);
  const newest = sent.at(-1);
  let allowedAt = newest === undefined ? now : newest + NEW_CODE_COOLDOWN_MS;
  if (sent.length >= NEW_CODES_PER_WINDOW) {
    // The window frees a place when the fifth newest mail leaves it.
    const freesAt = sent[sent.length - NEW_CODES_PER_WINDOW]! + NEW_CODE_WINDOW_MS;
    allowedAt = Math.max(allowedAt, freesAt);
  }
  if (allowedAt <= now) return;
  const retryAfterSeconds = String(Math.ceil((allowedAt - now) / 1000));
  throw new DomainError("resource_exhausted", "code.resend_limited", "a new code was sent recently; try again later", { retryAfterSeconds });
}
