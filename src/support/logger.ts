import { pino, type DestinationStream, type Logger } from "pino";
import { batchedStdout } from "./batched-lines.js";

export type { Logger };

/**
 * Structured JSON logs. Headers and fields that can carry secrets are redacted by path as a safety
 * net; code never logs request messages in the first place.
 *
 * By default lines go to process.stdout (written synchronously for files and pipes on Linux), a turn of the event
 * loop's lines in one write (batched-lines.ts), not to pino's own fd writer: when the reader of a pipe is gone, that
 * writer's exit flush retries forever and the process never exits after SIGTERM. main.ts drops stdout's EPIPE instead.
 */
export function createLogger(level: string, destination: DestinationStream = batchedStdout()): Logger {
  return pino(
    {
      level,
      base: { service: "gatehouse" },
      timestamp: () => isoTimeField(Date.now()),
      redact: {
        paths: ["authorization", "*.authorization", "password", "*.password", "token", "*.token", "secret", "*.secret"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}

let cachedSecond = Number.NaN;
let cachedPrefix = "";

/**
 * pino's `"time"` field as an ISO 8601 UTC date with milliseconds — the same text as `Date.toISOString()` (what
 * pino's isoTime writes) for dates from 1970 to 9999 — made from a prefix kept per second: formatting a Date for
 * every line was one of the dearest steps of a call's logging.
 */
export function isoTimeField(now: number): string {
  const second = Math.floor(now / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = `,"time":"${new Date(second * 1000).toISOString().slice(0, 20)}`;
  }
  return `${cachedPrefix}${String(now - second * 1000).padStart(3, "0")}Z"`;
}

/**
 * The logger of the one line per call (src/interceptors/observe.ts). That line has a fixed shape — request id,
 * procedure, protocol, code, duration, caller id — none of it a secret, so it skips the redaction that every other
 * line gets as a safety net: walking the redaction paths (wildcards included) was the most expensive part of a
 * no-op call's logging. Same level and destination as `logger`.
 */
export function accessLogOf(logger: Logger): Logger {
  // Stryker disable next-line ObjectLiteral,ArrayDeclaration: redacting the access line too changes no line (it has no such field), only its cost
  return logger.child({}, { redact: { paths: [] } });
}
