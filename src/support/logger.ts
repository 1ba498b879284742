import { pino, type DestinationStream, type Logger } from "pino";

export type { Logger };

/**
 * Structured JSON logs. Headers and fields that can carry secrets are redacted by path as a safety
 * net; code never logs request messages in the first place.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "gatehouse" },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ["authorization", "*.authorization", "password", "*.password", "token", "*.token", "secret", "*.secret"],
        censor: "[redacted]",
      },
    },
    destination,
  );
}
