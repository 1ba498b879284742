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
  "projects.org_id, projects.name_key": () => alreadyExists("project.already_exists", "a project with this name exists in the organization"),
  "project_roles.project_id, project_roles.role_key": () => alreadyExists("project.role.already_exists", "the project has this role already"),
  "project_grants.project_id, project_grants.granted_org_id": () =>
    alreadyExists("project.grant.already_exists", "the project is granted to this organization already"),
  "applications.project_id, applications.name_key": () =>
    alreadyExists("application.already_exists", "an application with this name exists in the project"),
  "identity_providers.owner_id, identity_providers.name_key": () =>
    alreadyExists("idp.already_exists", "an identity provider with this name exists in the organization"),
  "user_idp_links.idp_id, user_idp_links.external_user_id": () =>
    alreadyExists("user.idp_link.already_exists", "this external account is linked to another user"),
  "smtp_configs.instance_id": () => alreadyExists("smtp.already_exists", "the instance has an SMTP configuration; update it instead"),
  "events.aggregate_type, events.aggregate_id, events.aggregate_version": () =>
    new DomainError("aborted", "store.concurrent_write", "the object was changed concurrently; retry"),
};

/** A conditional write found its condition false; the commit is rolled back. */
export const conditionFailed = (message: string) => new DomainError("aborted", "store.condition_failed", message);

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
    // Stryker disable next-line Regex: SQLite's message of a unique violation always starts with this prefix, so the anchor changes nothing
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
