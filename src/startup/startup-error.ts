/**
 * A start-up failure the operator can act on: `message` is the one line printed on stderr — what is
 * wrong and what to do. The underlying error (if any) is kept as `cause` for the debug log, never
 * printed as a stack trace.
 */
export class StartupError extends Error {
  // Stryker disable next-line StringLiteral: only in stack traces of the debug log; the operator sees the message
  override readonly name = "StartupError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
