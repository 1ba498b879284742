/**
 * The one way a test waits for something that happens asynchronously: poll `check` until it answers
 * a truthy value, with a deadline. No fixed sleeps before assertions; a failure names what was awaited
 * (and the last value seen or the last error the check threw), so a timeout reads like an assertion.
 */
export interface EventuallyOptions {
  /** What is awaited, for the error ("the outbox row for a@example.com to leave pending"). */
  what: string;
  /** Deadline; generous, since the two cores are shared. */
  timeoutMs?: number;
  /** Pause between checks. */
  intervalMs?: number;
}

export async function eventually<T>(check: () => T | Promise<T>, options: EventuallyOptions): Promise<NonNullable<T>> {
  const { what, timeoutMs = 10_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      // A check may throw while the awaited state is still coming (a server still starting); keep polling.
      last = error;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? `last error: ${last.message}` : `last value: ${describe(last)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${seen})`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? String(v) : v)) ?? String(value);
  } catch {
    return String(value);
  }
}
