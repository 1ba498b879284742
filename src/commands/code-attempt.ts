import type { Deps } from "../context.js";
import { checkCode, MAX_CODE_ATTEMPTS } from "../domain/codes.js";
import { DomainError, failedPrecondition, invalidArgument } from "../domain/errors.js";
import type { NewEvent, StoredEvent } from "../events/event.js";
import type { RowWrite } from "../store/commit.js";
import type { OneTimeCodeRow } from "../store/rows.js";

/** The reasons of one kind of code: `<prefix>.invalid`, `.expired`, `.exhausted`. */
export type CodeReasonPrefix = "email_code" | "init_code";

/** What a right code writes besides its own use (computed only once the code is judged right). */
export interface CodeSuccess {
  writes: RowWrite[];
  events: NewEvent[];
}

export interface CodeAttempt {
  code: OneTimeCodeRow;
  candidate: string;
  at: Date;
  reasons: CodeReasonPrefix;
  /** Commits on behalf of whoever makes the attempt (the caller, or the user themself on the hosted page). */
  commit: (change: { writes: RowWrite[]; events: NewEvent[] }) => Promise<StoredEvent[]>;
  /**
   * The rest of a right attempt's commit. Called only for a right code, so slow work (hashing a new password) is never
   * done for a wrong one. It may throw (a DomainError) to refuse the attempt without spending it.
   */
  onRight: () => Promise<CodeSuccess>;
  /** The event recording a wrong attempt. */
  wrongEvent: NewEvent;
}

/**
 * One attempt at a pending code — VerifyEmail's and the hosted initialization page's, one rule for both: the same
 * attempt limit, expiry and single use. Every attempt at a code that is neither used, void nor expired claims one of
 * its attempts in the very commit that records it (`code.claimAttempt`, conditional), so concurrent attempts can never
 * make more than MAX_CODE_ATTEMPTS, and a right code is used in the same commit as what it proves. A wrong attempt is
 * recorded (one event) before the answer `<prefix>.invalid` with `attemptsLeft`; an expired code is
 * `<prefix>.expired`, a void one `<prefix>.exhausted` (failed_precondition); neither of those is recorded.
 */
export async function attemptCode(deps: Pick<Deps, "masterKey" | "store">, attempt: CodeAttempt): Promise<StoredEvent[]> {
  const { code, reasons } = attempt;
  const verdict = checkCode(deps.masterKey, code, attempt.candidate, attempt.at);
  switch (verdict) {
    case "ok": {
      const success = await attempt.onRight();
      return claimed(deps, attempt, () =>
        attempt.commit({
          writes: [{ kind: "code.claimAttempt", id: code.id, max: MAX_CODE_ATTEMPTS }, { kind: "code.use", id: code.id, at: attempt.at.getTime() }, ...success.writes],
          events: success.events,
        }),
      );
    }
    case "invalid": {
      const attemptsLeft = String(Math.max(0, MAX_CODE_ATTEMPTS - code.attempts - 1));
      await claimed(deps, attempt, () => attempt.commit({ writes: [{ kind: "code.claimAttempt", id: code.id, max: MAX_CODE_ATTEMPTS }], events: [attempt.wrongEvent] }));
      throw invalidArgument(`${reasons}.invalid`, "the code is not valid", [], { attemptsLeft });
    }
    // Stryker disable next-line ConditionalExpression,StringLiteral: both callers answer a used code (usedAt set) as "no code pending" before the attempt, so checkCode never says "used" here
    case "used":
      // Stryker disable next-line StringLiteral: unreachable, see the case above
      throw invalidArgument(`${reasons}.invalid`, "the code is not valid");
    case "expired":
      throw invalidArgument(`${reasons}.expired`, "the code has expired; request a new one");
    case "exhausted":
      throw failedPrecondition(`${reasons}.exhausted`, "too many wrong attempts; request a new code");
  }
}

/**
 * Runs a commit that claims an attempt on the code. When a concurrent request got to the code first, the claim fails
 * and the commit is rolled back (no slot, no event), and the answer says what became of the code: used or replaced
 * meanwhile (the right code given elsewhere, a new code sent, an admin's SetPassword voiding the init code) is
 * `<prefix>.invalid`, as a code that was no longer pending is; its last attempt made by another is `<prefix>.exhausted`.
 */
async function claimed<T>(deps: Pick<Deps, "store">, attempt: CodeAttempt, commit: () => Promise<T>): Promise<T> {
  try {
    return await commit();
  } catch (error) {
    if (!(error instanceof DomainError) || error.reason !== "store.condition_failed") throw error;
    const now = await deps.store.findCode(attempt.code.userId, attempt.code.kind);
    if (now === undefined || now.id !== attempt.code.id || now.usedAt !== null) throw invalidArgument(`${attempt.reasons}.invalid`, "the code is no longer valid");
    throw failedPrecondition(`${attempt.reasons}.exhausted`, "too many attempts; request a new code");
  }
}
