import { DomainError } from "../../domain/errors.js";
import { referenceNotFound, storeBusy, uniqueViolation } from "../db-errors.js";

/** What node-postgres reports of an error the server raised (its SQLSTATE and, for constraints, which one). */
interface PgServerError {
  code: string;
  constraint?: string;
  severity?: string;
}

/** The server's error under drizzle's wrapper (DrizzleQueryError, whose message carries the query and its parameters). */
function serverError(error: unknown): PgServerError | undefined {
  for (let cause = error, depth = 0; typeof cause === "object" && cause !== null && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { code, severity } = cause as { code?: unknown; severity?: unknown };
    if (typeof code === "string" && typeof severity === "string") return cause as PgServerError;
  }
  return undefined;
}

/**
 * Returns the DomainError a PostgreSQL error stands for (the same ones SQLite's stand for, db-errors.ts), or the
 * server's error itself when it is unexpected — never drizzle's wrapper, whose message would carry the parameters
 * (hashes, sealed values) into the log.
 */
export function toDomainError(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  const server = serverError(error);
  if (!server) return error;
  switch (server.code) {
    case "23505": // unique_violation: the index or key names the rule
      return (server.constraint !== undefined ? uniqueViolation(server.constraint) : undefined) ?? server;
    case "23503": // foreign_key_violation
      return referenceNotFound();
    case "40001": // serialization_failure
    case "40P01": // deadlock_detected
    case "55P03": // lock_not_available
      return storeBusy();
    default:
      return server;
  }
}
