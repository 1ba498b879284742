import { DomainError } from "../../domain/errors.js";
import { referenceNotFound, storeBusy, storeUnavailable, uniqueViolation } from "../db-errors.js";

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
  if (isConnectionFailure(error)) return storeUnavailable();
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

/** node-postgres' own errors when the server cannot be reached or the connection broke (they carry no SQLSTATE). */
const CONNECTION_ERRNOS = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"]);
const CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;

/**
 * Whether `error` (or its cause, under drizzle's wrapper) says the database is out of reach rather than that the
 * statement was wrong: the socket failed, or the server refuses work for now — SQLSTATE class 08 (connection
 * exception), 53 (insufficient resources: too many connections, disk full) or 57P01-57P03 (shutting down, crashed,
 * starting up). A client meets these as `unavailable`, never `internal`: retrying later is the right move.
 */
export function isConnectionFailure(error: unknown): boolean {
  for (let cause = error, depth = 0; typeof cause === "object" && cause !== null && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { code, severity, message } = cause as { code?: unknown; severity?: unknown; message?: unknown };
    if (typeof severity === "string" && typeof code === "string") return code.startsWith("08") || code.startsWith("53") || /^57P0[123]$/.test(code);
    if (typeof code === "string" && CONNECTION_ERRNOS.has(code)) return true;
    if (typeof message === "string" && CONNECTION_MESSAGES.test(message)) return true;
  }
  return false;
}
