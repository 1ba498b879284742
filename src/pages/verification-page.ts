import { type LinkHolder, resolveLinkHolder } from "../access/link-holder.js";
import { verifyEmail } from "../commands/email-verification.js";
import type { Deps } from "../context.js";
import { DomainError } from "../domain/errors.js";
import { pendingCode } from "../queries/pending-code.js";
import { checkFormToken, formToken } from "./form-guard.js";
import { html, message } from "./html.js";
import type { FormTarget, PageAnswer } from "./page-answer.js";
import { codeField, linkIds, textField } from "./page-input.js";
import { newCodePage } from "./new-code-page.js";
import { deadCodePage, hiddenFields, staleFormPage } from "./page-parts.js";

/** The path of the verification link in mails (notify/templates.ts): keep it stable, mails already out carry it. */
export const VERIFICATION_PATH = "/ui/login/mail/verification";
const TITLE = "Verify your email address";

async function formFor(deps: Deps, holder: LinkHolder) {
  const code = await pendingCode(deps, holder.user.id, "email");
  const target: FormTarget = { action: "verification", userId: holder.user.id, orgId: holder.user.orgId, token: formToken(deps.masterKey, "verification", holder.user.id, code.codeId) };
  return { code, target };
}

/** The form; with `problem` (the entry was refused) it is said first and the field is marked, with `notice` a hint. */
function codeFormPage(holder: LinkHolder, form: FormTarget, prefill: string, say: { problem?: string; notice?: string } = {}): PageAnswer {
  const { problem, notice } = say;
  return {
    status: problem ? 400 : 200,
    page: {
      title: TITLE,
      organizationName: holder.organization.name,
      body: html`${problem ? message("error", problem) : ""}${notice ? message("info", notice) : ""}
<p>Enter the code from the mail we sent you to confirm that this email address is yours.</p>
<form method="post" action="${form.action}">
${hiddenFields(form)}
<label for="code">Code from the mail</label>
<input id="code" name="code" class="code" value="${prefill}" required maxlength="20" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" aria-describedby="${problem ? "message code-hint" : "code-hint"}" aria-invalid="${problem ? "true" : "false"}">
<p class="hint" id="code-hint">6 letters and digits, as in the mail.</p>
<button type="submit" name="intent" value="verify">Verify my email address</button>
</form>`,
    },
  };
}

function verifiedPage(holder: LinkHolder, already: boolean): PageAnswer {
  const words = already ? "Your email address is verified already. There is nothing more to do here." : "Your email address is verified. Thank you!";
  // A user created without a password still has to set one: the initialization mail has the link for that.
  const next = holder.user.passwordHash === null ? message("info", "To finish setting up your account, set your password with the “Set my password” link in the mail.") : undefined;
  return { status: 200, page: { title: TITLE, organizationName: holder.organization.name, body: html`${message("success", words)}${next}` } };
}

/** GET: the form with the code from the link filled in, or what became of the code. Counts no attempt. */
export async function showVerification(deps: Deps, query: URLSearchParams): Promise<PageAnswer> {
  const ids = linkIds(query);
  const prefill = codeField(query);
  const holder = await resolveLinkHolder(deps, ids);
  if (holder.user.emailVerified) return verifiedPage(holder, true);
  const { code, target } = await formFor(deps, holder);
  if (code.state !== "usable") return deadCodePage(TITLE, holder.organization.name, target, code.state);
  return codeFormPage(holder, target, prefill);
}

/**
 * POST: verify with the code (VerifyEmail's own command, the user as the caller: the same attempt limit, expiry and
 * single use), or mail a new code. The form's token must belong to this user and their current code.
 */
export async function submitVerification(deps: Deps, form: URLSearchParams): Promise<PageAnswer> {
  const ids = linkIds(form);
  const entered = codeField(form);
  const intent = textField(form, "intent", 20);
  const token = textField(form, "token", 100);
  const holder = await resolveLinkHolder(deps, ids);
  const { target, code } = await formFor(deps, holder);
  if (!checkFormToken(deps.masterKey, "verification", holder.user.id, code.codeId, token)) return staleFormPage(TITLE, holder.organization.name);
  if (intent === "new_code") return newCodePage(deps, holder, "email", TITLE, refusedNewCode(holder, target));
  if (entered === "") return codeFormPage(holder, target, "", { problem: "Enter the code from the mail." });
  try {
    await verifyEmail(deps, holder.caller, { userId: holder.user.id, verificationCode: entered });
    return verifiedPage(holder, false);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    switch (error.reason) {
      case "email_code.invalid": {
        const left = error.metadata["attemptsLeft"];
        // No attempts left to report: there was no code pending to try (used, or replaced by a newer mail's).
        if (left === undefined) return deadCodePage(TITLE, holder.organization.name, target, "none");
        if (left === "0") return deadCodePage(TITLE, holder.organization.name, target, "last_attempt");
        return codeFormPage(holder, target, entered, { problem: `That code is not right. ${left === "1" ? "1 attempt is" : `${left} attempts are`} left.` });
      }
      case "email_code.expired":
        return deadCodePage(TITLE, holder.organization.name, target, "expired");
      case "email_code.exhausted":
        return deadCodePage(TITLE, holder.organization.name, target, "exhausted");
      case "email.already_verified":
        return verifiedPage(holder, true);
      default:
        throw error;
    }
  }
}

function refusedNewCode(holder: LinkHolder, target: FormTarget) {
  return (error: DomainError): PageAnswer => {
    if (error.reason === "email.already_verified") return verifiedPage(holder, true);
    if (error.reason === "code.still_valid") return codeFormPage(holder, target, "", { notice: "The code in your newest mail still works: enter it here." });
    throw error;
  };
}
