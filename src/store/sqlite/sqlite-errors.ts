import { DomainError } from "../../domain/errors.js";
import { referenceNotFound, storeBusy, uniqueViolation } from "../db-errors.js";

/**
 * SQLite names the COLUMNS of a violated unique index in its message, not the index: which index (db-errors.ts names
 * the rule each one guards) those columns are.
 */
const uniqueIndexByColumns = new Map<string, string>([
  ["organizations.instance_id, organizations.name_key", "organizations_name_key"],
  ["users.instance_id, users.user_name_key", "users_user_name_key"],
  ["users.org_id, users.external_id", "users_external_id"],
  ["memberships.user_id, memberships.level, memberships.scope_id", "memberships_user_scope"],
  ["projects.org_id, projects.name_key", "projects_name_key"],
  ["project_roles.project_id, project_roles.role_key", "project_roles_pkey"],
  ["project_grants.project_id, project_grants.granted_org_id", "project_grants_project_org"],
  ["applications.project_id, applications.name_key", "applications_name_key"],
  ["identity_providers.owner_id, identity_providers.name_key", "identity_providers_name_key"],
  ["user_idp_links.idp_id, user_idp_links.external_user_id", "user_idp_links_external"],
  ["smtp_configs.instance_id", "smtp_configs_pkey"],
  ["events.aggregate_type, events.aggregate_id, events.aggregate_version", "events_aggregate_version"],
]);

interface SqliteLikeError {
  code?: unknown;
  message?: unknown;
}

/** Returns the DomainError a better-sqlite3 error stands for, or the error itself when it is unexpected. */
export function toDomainError(error: unknown): unknown {
  if (error instanceof DomainError || typeof error !== "object" || error === null) return error;
  const { code, message } = error as SqliteLikeError;
  if (typeof code !== "string" || typeof message !== "string") return error;
  if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
    // Stryker disable next-line Regex: SQLite's message of a unique violation always starts with this prefix, so the anchor changes nothing
    const columns = message.replace(/^UNIQUE constraint failed: /, "");
    const index = uniqueIndexByColumns.get(columns);
    return (index !== undefined ? uniqueViolation(index) : undefined) ?? error;
  }
  if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") return referenceNotFound();
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return storeBusy();
  return error;
}
