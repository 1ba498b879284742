import type { LinkHolder } from "../access/link-holder.js";
import { type NewCodeKind, requestNewCode } from "../commands/request-new-code.js";
import type { Deps } from "../context.js";
import { DomainError } from "../domain/errors.js";
import type { PageAnswer } from "./page-answer.js";
import { newCodeLimitedPage, newCodeSentPage } from "./page-parts.js";

/**
 * "Send me a new code" on a page: the answers every page gives alike (sent; asked too often, with Retry-After), and
 * the command's other refusals for the page to put in its own words (`refused`; an error it does not know it throws).
 */
export async function newCodePage(deps: Deps, holder: LinkHolder, kind: NewCodeKind, title: string, refused: (error: DomainError) => PageAnswer): Promise<PageAnswer> {
  try {
    await requestNewCode(deps, holder, kind);
    return newCodeSentPage(title, holder.organization.name);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // Stryker disable next-line StringLiteral: the limit always names retryAfterSeconds
    if (error.reason === "code.resend_limited") return newCodeLimitedPage(title, holder.organization.name, error.metadata["retryAfterSeconds"] ?? "60");
    return refused(error);
  }
}
