import { DomainError, alreadyExists, failedPrecondition } from "../domain/errors.js";

/**
 * Maps driver errors to DomainErrors, in one place. A unique index names its columns in SQLite's
 * message, so each index that guards a business rule maps to the rule's reason here.
 */
const uniqueViolations: Record<string, () => DomainError> = {
  "organizations.instance_id, organizations.name_key": () =>
    alreadyExists("organization.already_exists", "an organization with this name exists"),
  "users.instance_id, users.user_name_key": () => alreadyExists("user.already_exists", "a user with this user name exists"),
  "memberships.user_id, memberships.level, memberships.scope_id": () =>
    alreadyExists("member.already_exists", "the user is a member here already"),
  "events.aggregate_type, events.aggregate_id, events.aggregate_version": () =>
    new DomainError("aborted", "store.concurrent_write", "the object was changed concurrently; retry"),
};

interface SqliteLikeError {
  code?: unknown;
  message?: unknown;
}

/** Returns the DomainError a driver error stands for, or the error itself when it is unexpected. */
export function toDomainError(error: unknown): unknown {
  if (error instanceof DomainError || typeof error !== "object" || error === null) return error;
  const { code, message } = error as SqliteLikeError;
  if (typeof code !== "string" || typeof message !== "string") return error;
  if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
    const columns = message.replace(/^UNIQUE constraint failed: /, "");
    return uniqueViolations[columns]?.() ?? error;
  }
  if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") {
    return failedPrecondition("reference.not_found", "a referenced object does not exist");
  }
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new DomainError("unavailable", "store.busy", "the database is busy; retry");
  }
  return error;
}
