import { type LinkHolder, resolveLinkHolder } from "../access/link-holder.js";
import { initializeUserWithCode } from "../commands/initialize-user.js";
import type { Deps } from "../context.js";
import { DomainError, notFound } from "../domain/errors.js";
import { DEFAULT_PASSWORD_POLICY, type PasswordPolicy } from "../domain/password-policy.js";
import { pendingCode } from "../queries/pending-code.js";
import { checkFormToken, formToken } from "./form-guard.js";
import { html, message } from "./html.js";
import { newCodePage } from "./new-code-page.js";
import type { FormTarget, PageAnswer } from "./page-answer.js";
import { BadPageInput, codeField, linkIds, textField } from "./page-input.js";
import { deadCodePage, hiddenFields, staleFormPage } from "./page-parts.js";

/** The path of the set-password link in initialization mails (notify/templates.ts): stable, mails already out carry it. */
export const INIT_PATH = "/ui/login/user/init";
const TITLE = "Set your password";
/** CreateHumanUser's limit for a password (user.proto); a longer one is refused before any work. */
const MAX_PASSWORD_CHARS = 1024;

/** The policy's rules in words, in the order checkPasswordPolicy names them (`rules` metadata of password.policy). */
function policyRules(policy: PasswordPolicy): [rule: string, words: string][] {
  const rules: [string, string][] = [["min_length", `at least ${policy.minLength} characters`]];
  if (policy.requireUppercase) rules.push(["uppercase", "an upper-case letter"]);
  if (policy.requireLowercase) rules.push(["lowercase", "a lower-case letter"]);
  if (policy.requireDigit) rules.push(["digit", "a digit"]);
  if (policy.requireSymbol) rules.push(["symbol", "a symbol (neither a letter nor a digit)"]);
  return rules;
}

interface InitForm {
  holder: LinkHolder;
  target: FormTarget;
  policy: PasswordPolicy;
  /** The init code from the link: the mail never shows it, so it rides along hidden, in the post's body. */
  code: string;
}

/** A user never invited to set a password (created with an IDP link) has no such page: the link is just not valid. */
const linkInvalid = () => notFound("link.invalid", "the user was never sent a code to set a password");

async function formFor(deps: Deps, holder: LinkHolder) {
  const code = await pendingCode(deps, holder.user.id, "init");
  const policy = (await deps.store.getPasswordPolicy(holder.user.instanceId)) ?? DEFAULT_PASSWORD_POLICY;
  const target: FormTarget = { action: "init", userId: holder.user.id, orgId: holder.user.orgId, token: formToken(deps.masterKey, "init", holder.user.id, code.codeId) };
  return { code, policy, target };
}

/** The password form; with `problem` the refusal comes first and both fields are marked. The password is never echoed. */
function passwordFormPage(form: InitForm, problem?: string): PageAnswer {
  const invalid = problem ? "true" : "false";
  const describedBy = problem ? "message password-rules" : "password-rules";
  return {
    status: problem ? 400 : 200,
    page: {
      title: TITLE,
      organizationName: form.holder.organization.name,
      body: html`${problem ? message("error", problem) : ""}
<p>Choose the password for your new account.</p>
<form method="post" action="${form.target.action}">
${hiddenFields(form.target)}
<input type="hidden" name="code" value="${form.code}">
<label for="password">New password</label>
<input id="password" name="password" type="password" required autocomplete="new-password" aria-describedby="${describedBy}" aria-invalid="${invalid}">
<div class="hint" id="password-rules">The password needs:
<ul class="rules">${policyRules(form.policy).map(([, words]) => html`<li>${words}</li>`)}</ul>
</div>
<label for="confirmation">Repeat the password</label>
<input id="confirmation" name="confirmation" type="password" required autocomplete="new-password" aria-invalid="${invalid}">
<button type="submit" name="intent" value="set_password">Set my password</button>
</form>`,
    },
  };
}

function alreadySetUpPage(holder: LinkHolder): PageAnswer {
  return { status: 200, page: { title: TITLE, organizationName: holder.organization.name, body: message("info", "Your account has a password already. There is nothing more to do here.") } };
}

async function donePage(deps: Deps, holder: LinkHolder): Promise<PageAnswer> {
  const user = await deps.store.findUserById(holder.user.id);
  const lines = ["Your password is set.", `Sign in with your user name “${holder.user.userName}” and this password.`];
  // Stryker disable next-line OptionalChaining: the user was just initialized; only a removal racing this request makes it undefined
  if (!holder.user.emailVerified && user?.emailVerified) lines.push("Your email address is verified too.");
  return { status: 200, page: { title: TITLE, organizationName: holder.organization.name, body: message("success", ...lines) } };
}

/** GET: the password form with the policy's rules, or what became of the code. Counts no attempt. */
export async function showInit(deps: Deps, query: URLSearchParams): Promise<PageAnswer> {
  const ids = linkIds(query);
  const code = codeField(query);
  if (code === "") throw new BadPageInput(400, "The link is incomplete: it has no code. Open it again from the mail, or copy the whole link into the address bar.");
  const holder = await resolveLinkHolder(deps, ids);
  if (holder.user.passwordHash !== null) return alreadySetUpPage(holder);
  const { code: pending, policy, target } = await formFor(deps, holder);
  if (pending.state === "none") throw linkInvalid();
  if (pending.state !== "usable") return deadCodePage(TITLE, holder.organization.name, target, pending.state);
  return passwordFormPage({ holder, target, policy, code });
}

/**
 * POST: set the first password with the init code (initializeUserWithCode: VerifyEmail's attempt limit, expiry and
 * single use; the policy; a pending email verified by the same code), or mail a new code. The two passwords are
 * compared first: a typo costs no attempt.
 */
export async function submitInit(deps: Deps, fields: URLSearchParams): Promise<PageAnswer> {
  const ids = linkIds(fields);
  const code = codeField(fields);
  const intent = textField(fields, "intent", 20);
  const token = textField(fields, "token", 100);
  const password = textField(fields, "password", MAX_PASSWORD_CHARS);
  const confirmation = textField(fields, "confirmation", MAX_PASSWORD_CHARS);
  const holder = await resolveLinkHolder(deps, ids);
  const { code: pending, policy, target } = await formFor(deps, holder);
  if (!checkFormToken(deps.masterKey, "init", holder.user.id, pending.codeId, token)) return staleFormPage(TITLE, holder.organization.name);
  if (holder.user.passwordHash !== null) return alreadySetUpPage(holder);
  if (intent === "new_code") return newCodePage(deps, holder, "init", TITLE, (error) => refusedNewCode(holder, error));
  if (code === "") throw new BadPageInput(400, "The link is incomplete: it has no code. Open it again from the mail.");
  const form: InitForm = { holder, target, policy, code };
  if (password === "") return passwordFormPage(form, "Enter a password.");
  if (password !== confirmation) return passwordFormPage(form, "The two passwords are not the same. Type the same password twice.");
  try {
    await initializeUserWithCode(deps, { userId: holder.user.id, code, password });
    return await donePage(deps, holder);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return refusedPassword(form, error);
  }
}

function refusedPassword(form: InitForm, error: DomainError): PageAnswer {
  const { holder, target } = form;
  switch (error.reason) {
    case "password.policy": {
      const broken = new Set((error.metadata["rules"] ?? "").split(","));
      const missing = policyRules(form.policy).filter(([rule]) => broken.has(rule)).map(([, words]) => words);
      return passwordFormPage(form, `The password does not meet the rules. It still needs: ${missing.join(", ")}.`);
    }
    case "init_code.invalid": {
      const left = error.metadata["attemptsLeft"];
      if (left === undefined) return deadCodePage(TITLE, holder.organization.name, target, "none");
      if (left === "0") return deadCodePage(TITLE, holder.organization.name, target, "last_attempt");
      // The code rides hidden (the mail never shows it): the person cannot correct it here, only open the link again.
      return {
        status: 400,
        page: {
          title: TITLE,
          organizationName: holder.organization.name,
          body: message("error", `The code in this link is not right (${left === "1" ? "1 attempt is" : `${left} attempts are`} left).`, "Open the link in the newest mail again; if the mail shows it over two lines, copy the whole link into the address bar."),
        },
      };
    }
    case "init_code.expired":
      return deadCodePage(TITLE, holder.organization.name, target, "expired");
    case "init_code.exhausted":
      return deadCodePage(TITLE, holder.organization.name, target, "exhausted");
    default:
      throw error;
  }
}

function refusedNewCode(holder: LinkHolder, error: DomainError): PageAnswer {
  if (error.reason === "user.already_initialized") return alreadySetUpPage(holder);
  if (error.reason === "init_code.none") throw linkInvalid();
  if (error.reason === "code.still_valid") {
    return { status: 200, page: { title: TITLE, organizationName: holder.organization.name, body: message("info", "The link in your newest mail still works: open it to set your password.") } };
  }
  throw error;
}
