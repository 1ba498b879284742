import type { Deps } from "../context.js";
import { checkCode, type CodeKind } from "../domain/codes.js";

/** What can still be done with a user's code of one kind, judged on the stored code alone (no guess is made). */
export type PendingCodeState = "usable" | "used" | "expired" | "exhausted" | "none";

export interface PendingCode {
  state: PendingCodeState;
  /** The stored code's id (not the code), or undefined when the user has none of that kind. */
  codeId: string | undefined;
}

/**
 * The state of the user's code of `kind`, with the very rule the commands check an entry with (domain/codes.ts):
 * judged against an empty entry, which never matches a code, a code that is neither used, exhausted nor expired
 * comes back "invalid" — one that would still accept the right entry. Counts no attempt and writes nothing.
 */
export async function pendingCode(deps: Deps, userId: string, kind: CodeKind): Promise<PendingCode> {
  const code = await deps.store.findCode(userId, kind);
  if (!code) return { state: "none", codeId: undefined };
  // Stryker disable next-line StringLiteral: any entry other than the code gets the same verdict; the empty one can never be it
  const verdict = checkCode(deps.masterKey, code, "", deps.clock.now());
  return { state: verdict === "used" || verdict === "expired" || verdict === "exhausted" ? verdict : "usable", codeId: code.id };
}
