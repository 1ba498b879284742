/**
 * Makes an error without capturing its stack: for errors whose stack nobody reads, made on every call of a kind — the
 * abort reasons connect makes (abort-reasons.ts), and the expected failures a caller is answered with (DomainError
 * and the wire error it becomes). Capturing a stack deep in a call's async frames cost 5-10 µs per error here.
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
