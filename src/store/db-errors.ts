import { DomainError, alreadyExists, failedPrecondition } from "../domain/errors.js";

/**
 * What a storage error means to a client, in one place for every engine. Each engine recognises its driver's errors
 * (sqlite/sqlite-errors.ts, postgres/pg-errors.ts) and answers with these, so a rule kept by the database reads the
 * same whichever engine kept it.
 *
 * A unique index (or key) that guards a business rule is named here by its name in the schemas: both engines give
 * their indexes the same names.
 */
const uniqueRules = new Map<string, () => DomainError>([
  ["organizations_name_key", () => alreadyExists("organization.already_exists", "an organization with this name exists")],
  ["users_user_name_key", () => alreadyExists("user.already_exists", "a user with this user name exists")],
  ["users_external_id", () => alreadyExists("user.external_id.already_exists", "a user of the organization has this external id")],
  ["memberships_user_scope", () => alreadyExists("member.already_exists", "the user is a member here already")],
  ["projects_name_key", () => alreadyExists("project.already_exists", "a project with this name exists in the organization")],
  ["project_roles_pkey", () => alreadyExists("project.role.already_exists", "the project has this role already")],
  ["project_grants_project_org", () => alreadyExists("project.grant.already_exists", "the project is granted to this organization already")],
  ["applications_name_key", () => alreadyExists("application.already_exists", "an application with this name exists in the project")],
  ["identity_providers_name_key", () => alreadyExists("idp.already_exists", "an identity provider with this name exists in the organization")],
  ["user_idp_links_external", () => alreadyExists("user.idp_link.already_exists", "this external account is linked to another user")],
  ["smtp_configs_pkey", () => alreadyExists("smtp.already_exists", "the instance has an SMTP configuration; update it instead")],
  ["events_aggregate_version", () => new DomainError("aborted", "store.concurrent_write", "the object was changed concurrently; retry")],
]);

/** The DomainError of a violation of the unique index `name`, or undefined when that index guards no rule. */
export function uniqueViolation(name: string): DomainError | undefined {
  return uniqueRules.get(name)?.();
}

/** A row refers to one that does not exist (a foreign key). */
export const referenceNotFound = () => failedPrecondition("reference.not_found", "a referenced object does not exist");

/** The database could not take the write now; the caller retries. */
export const storeBusy = () => new DomainError("unavailable", "store.busy", "the database is busy; retry");

/**
 * The database server cannot be reached or refuses work for now (down, restarting, out of connections): the caller
 * retries later, as with `store.busy`. A commit answered so was rolled back — except when the connection broke between
 * COMMIT and its acknowledgement, where the outcome is unknown to the server's client too: a retry then meets the
 * write's own uniqueness rule, or, with `expected_sequence`, `concurrent_modification`.
 */
export const storeUnavailable = () => new DomainError("unavailable", "store.unavailable", "the database cannot be reached; retry later");

/** A conditional write found its condition false; the commit is rolled back. */
export const conditionFailed = (message: string) => new DomainError("aborted", "store.condition_failed", message);
