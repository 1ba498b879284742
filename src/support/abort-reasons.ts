import { withoutStack } from "./stackless.js";

/**
 * `abort()` without a reason, made cheap: the reason is still a fresh AbortError DOMException (same name, message and
 * code), only without stack frames.
 *
 * Why: connect-es and connect-node abort two AbortControllers on every call without a reason (the handler context's
 * when the call ends, the request's when its response closes), and Node then builds a DOMException with a captured
 * stack for each, which no code reads. In a CPU profile of the no-op call that was 8-10 % of the server's CPU; with
 * this, the no-op takes 10-20 µs less per call (bench/README.md). A reason a caller passes is kept as it is.
 *
 * Process-wide, as connect's controllers are made inside connect: installed once when the server starts.
 */
export function installStacklessAbortReasons(): void {
  const prototype = AbortController.prototype as AbortController & { [installed]?: true };
  if (prototype[installed]) return;
  const abort = prototype.abort;
  // Stryker disable ObjectLiteral,StringLiteral,BooleanLiteral: process-wide and installed once (the check above), so a
  // mutant here is only active in a test process that has installed the real one already (Stryker reuses its workers);
  // in a fresh process, test/support/abort-reasons.test.ts and test/server/abort-reasons-installed.test.ts state it.
  Object.defineProperty(prototype, "abort", {
    ...Object.getOwnPropertyDescriptor(prototype, "abort"),
    value: function abortWithReason(this: AbortController, reason?: unknown) {
      abort.call(this, reason === undefined ? stacklessAbortError() : reason);
    },
  });
  Object.defineProperty(prototype, installed, { value: true });
  // Stryker restore ObjectLiteral,StringLiteral,BooleanLiteral
}
const installed = Symbol("gatehouse.stacklessAbortReasons");

const ABORTED = "This operation was aborted";

/** What `abort()` makes by default, without capturing the stack (the costly part). */
function stacklessAbortError(): DOMException {
  return withoutStack(() => new DOMException(ABORTED, "AbortError"));
}
