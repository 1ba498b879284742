import { html, type Html, message } from "./html.js";
import type { FormTarget, PageAnswer } from "./page-answer.js";

/** The hidden fields every form carries: which link it belongs to and its form token. Never the code. */
export function hiddenFields(form: FormTarget): Html {
  return html`<input type="hidden" name="userID" value="${form.userId}">
<input type="hidden" name="orgID" value="${form.orgId}">
<input type="hidden" name="token" value="${form.token}">`;
}

/** Why a code can no longer be used, in words. */
export type DeadCode = "expired" | "exhausted" | "used" | "none" | "last_attempt";

const DEAD_CODE_WORDS: Record<DeadCode, string> = {
  expired: "The code in this link has expired.",
  exhausted: "The code in this link was entered wrongly too many times, so it no longer works.",
  used: "The code in this link has been used already.",
  none: "The code in this link is no longer valid. If you asked for a new code, use the link in the newest mail.",
  last_attempt: "That code was not right, and it was the last attempt: the code no longer works.",
};

/** A code that cannot be used any more: the reason, and a button that mails a new code (never shows it). */
export function deadCodePage(title: string, organizationName: string, form: FormTarget, reason: DeadCode): PageAnswer {
  return {
    status: 410,
    page: {
      title,
      organizationName,
      body: html`${message("error", DEAD_CODE_WORDS[reason])}
<p>We can send a new code to your email address. It comes in a new mail; this page does not show it.</p>
<form method="post" action="${form.action}">
${hiddenFields(form)}
<button type="submit" name="intent" value="new_code">Send me a new code</button>
</form>`,
    },
  };
}

/** The new code went out by mail. */
export function newCodeSentPage(title: string, organizationName: string): PageAnswer {
  return {
    status: 200,
    page: {
      title,
      organizationName,
      body: html`${message("success", "We have sent a new code to your email address.", "Open the newest mail and follow its link. Links in older mails no longer work.")}`,
    },
  };
}

/** Too many new codes lately: when the next one may be asked for (also in Retry-After). */
export function newCodeLimitedPage(title: string, organizationName: string, retryAfterSeconds: string): PageAnswer {
  const minutes = Math.max(1, Math.ceil(Number(retryAfterSeconds) / 60));
  const wait = minutes === 1 ? "a minute" : `${minutes} minutes`;
  return {
    status: 429,
    headers: { "retry-after": retryAfterSeconds },
    page: {
      title,
      organizationName,
      body: html`${message("error", "A code was sent to your email address only a short while ago.", `Please check your mail (and its spam folder), or ask again in ${wait}.`)}`,
    },
  };
}

/**
 * The form's token does not belong to this user's current code: the page was left open while a new code was sent, or
 * the post was not made from a page Gatehouse rendered for this link. Nothing was tried or sent.
 */
export function staleFormPage(title: string, organizationName: string): PageAnswer {
  return {
    status: 403,
    page: {
      title,
      organizationName,
      body: html`${message("error", "This page is out of date, so nothing was done.", "Open the link in the newest mail we sent you and try again.")}`,
    },
  };
}
