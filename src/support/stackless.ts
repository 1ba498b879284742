/**
 * Makes an error without capturing its stack: for errors made on every call of a kind, whose stack tells nothing that
 * their kind does not — the abort reasons connect makes (abort-reasons.ts), and the expected failures a caller is
 * answered with (DomainError and the wire error it becomes). Capturing a stack deep in a call's async frames cost
 * 5-10 µs per error here. The few logs that show a DomainError (a delivery pass refused by a busy store, a page's
 * error of an unexpected kind) name it by its reason; errors of any other class keep their stacks.
 *
 * Should something have made Error.stackTraceLimit read-only, the error keeps its stack rather than the call failing
 * (Reflect.set answers false where an assignment would throw).
 */
export function withoutStack<T>(make: () => T): T {
  const limit = Error.stackTraceLimit;
  if (!Reflect.set(Error, "stackTraceLimit", 0)) return make();
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
