import { permissionDenied } from "./errors.js";
import type { Membership, Principal } from "./principal.js";
import { type Permission, permissionsOf, roleGrants } from "./roles.js";

/**
 * What a permission is needed on: always an organization, and for project- and grant-scoped
 * operations the project and grant, so that PROJECT_* and PROJECT_GRANT_* roles count only there.
 */
export interface Scope {
  orgId: string;
  projectId?: string;
  grantId?: string;
}

function membershipCovers(membership: Membership, scope: Scope): boolean {
  switch (membership.level) {
    case "instance":
      return true;
    case "org":
      return membership.scopeId === scope.orgId;
    case "project":
      return membership.ownerOrgId === scope.orgId && membership.scopeId === scope.projectId;
    case "project_grant":
      return membership.ownerOrgId === scope.orgId && membership.scopeId === scope.grantId;
  }
}

/** Whether the principal holds `permission` on `scope`. */
export function can(principal: Principal, permission: Permission, scope: Scope): boolean {
  return principal.memberships.some(
    (membership) => membershipCovers(membership, scope) && membership.roles.some((role) => roleGrants(role, permission)),
  );
}

/** Whether the principal holds `permission` instance-wide. */
export function canInstanceWide(principal: Principal, permission: Permission): boolean {
  return principal.memberships.some(
    (membership) => membership.level === "instance" && membership.roles.some((role) => roleGrants(role, permission)),
  );
}

/** Throws permission_denied unless the principal holds `permission` on `scope`. */
export function authorize(principal: Principal, permission: Permission, scope: Scope): void {
  if (!can(principal, permission, scope)) {
    throw permissionDenied("permission.denied", `missing permission ${permission}`, { permission });
  }
}

/**
 * Whether the principal has any role that applies inside `orgId`: the test `x-service-orgid` must pass.
 * Scoped (project, grant) roles count in the organization that owns their project.
 */
export function hasAnyRoleIn(principal: Principal, orgId: string): boolean {
  return principal.memberships.some(
    (membership) => membership.roles.length > 0 && (membership.level === "instance" || membership.ownerOrgId === orgId),
  );
}

/** The scope a membership's permissions apply to, as `can` checks it. */
export function scopeOfMembership(membership: Omit<Membership, "roles">): Scope | "instance" {
  switch (membership.level) {
    case "instance":
      return "instance";
    case "org":
      return { orgId: membership.scopeId };
    case "project":
      return { orgId: membership.ownerOrgId, projectId: membership.scopeId };
    case "project_grant":
      return { orgId: membership.ownerOrgId, ...(membership.projectId ? { projectId: membership.projectId } : {}), grantId: membership.scopeId };
  }
}

/**
 * The level of a scope, for error metadata. Only the level: the ids of a target's memberships are not
 * the caller's to see (it may have no right in that organization or project at all).
 */
function describeScope(scope: Scope | "instance"): string {
  if (scope === "instance") return "instance";
  if (scope.grantId) return "project_grant";
  if (scope.projectId) return "project";
  return "org";
}

function holds(principal: Principal, permission: Permission, scope: Scope | "instance"): boolean {
  // Stryker disable next-line ConditionalExpression,StringLiteral: can() given a scope with no organization, project or grant counts only instance memberships, exactly as canInstanceWide does
  return scope === "instance" ? canInstanceWide(principal, permission) : can(principal, permission, scope);
}

/**
 * THE privilege ceiling for acting on another principal's credentials or identity (tokens, email,
 * codes): the caller must hold every permission the target holds, in every scope it holds it.
 * Otherwise a user manager could mint a token for the instance owner and become it. Acting on
 * oneself is always within the ceiling.
 */
export function requireCoversPrincipal(caller: Principal, targetMemberships: readonly Membership[]): void {
  for (const membership of targetMemberships) {
    const scope = scopeOfMembership(membership);
    for (const role of membership.roles) {
      const missing = permissionsOf(role).find((permission) => !holds(caller, permission, scope));
      if (missing) {
        throw permissionDenied("principal.privileged", "the target user holds permissions the caller does not hold", {
          permission: missing,
          scope: describeScope(scope),
        });
      }
    }
  }
}

/**
 * What acting on a user reaches: its `credentials` (a token, its password, its email and codes), which would hand the
 * caller whatever the user holds; or only its `lifecycle` (deactivate, reactivate, lock, unlock, remove it, list or
 * revoke its tokens), which hands the caller nothing.
 */
export type Reach = "credentials" | "lifecycle";

/**
 * The memberships of a user that bind a caller acting on it (requireCoversPrincipal). For its credentials, every one.
 * For its lifecycle, every one but the memberships of a grant of another organization's project to the user's own
 * organization: the project's side gives those without the user's organization asking (mayMakeMember), and they must
 * not take the user out of its own organization's hands. (Tokens of the user issued by managers below such a role are
 * still revoked when it is given, and no such manager may mint one.) A role in another organization's scope given any
 * other way needed `user.write` in the user's organization, which is its consent, and binds as any other.
 * `grantedOrgOf` answers a grant's granted organization (undefined for a grant that no longer exists).
 */
export function membershipsBinding(
  reach: Reach,
  userOrgId: string,
  memberships: readonly Membership[],
  grantedOrgOf: (grantId: string) => string | undefined,
): readonly Membership[] {
  if (reach === "credentials") return memberships;
  return memberships.filter((membership) => !isGrantToOwnOrganization(membership, userOrgId, grantedOrgOf));
}

/**
 * Whether a membership is one of a grant of another organization's project to `userOrgId` (see membershipsBinding). A
 * project is never granted to its own organization, so a grant to the user's organization is of another's project.
 */
function isGrantToOwnOrganization(membership: Omit<Membership, "roles">, userOrgId: string, grantedOrgOf: (grantId: string) => string | undefined): boolean {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: only a grant has a granted organization (grantedOrgOf answers undefined for any other id), so the level's check only states the rule
  return membership.level === "project_grant" && grantedOrgOf(membership.scopeId) === userOrgId;
}

/**
 * The ceiling for granting roles: the caller must itself hold every permission of each role, in the
 * scope the role is granted in, so nobody hands out (to itself or an accomplice) more than it has.
 */
export function requireCanGrantRoles(caller: Principal, roles: readonly string[], where: Omit<Membership, "roles">): void {
  const missing = missingForRoles(caller, roles, where);
  if (missing) {
    throw permissionDenied("role.not_grantable", `granting ${missing.role} needs every permission of it, and ${missing.permission} is missing`, {
      ...missing,
      scope: describeScope(scopeOfMembership(where)),
    });
  }
}

/** The first permission of `roles`, with its role, that the principal does not hold where they apply. */
export function missingForRoles(principal: Principal, roles: readonly string[], where: Omit<Membership, "roles">): { role: string; permission: Permission } | undefined {
  const scope = scopeOfMembership(where);
  for (const role of roles) {
    const permission = permissionsOf(role).find((p) => !holds(principal, p, scope));
    if (permission) return { role, permission };
  }
  return undefined;
}

/**
 * Whose users may be made members where: a membership puts its holder under the privilege ceiling of its scope
 * (requireCoversPrincipal) and revokes the tokens of issuers who do not hold its roles (revokeTokensBeyondIssuer). So
 * a membership given to another organization's user would let the giver revoke that organization's tokens and take
 * its own user out of its user managers' hands. A user may be made a member of an organization, or of a project, of
 * its own organization; of a grant, of the project's organization or of the granted one (the grant's purpose); of the
 * instance, by those who may add instance members; anywhere else only by a caller holding `user.write` in the user's
 * own organization. (To any other caller the user is as unknown as one that does not exist.)
 */
export function mayMakeMember(caller: Principal, userOrgId: string, where: { level: Membership["level"]; ownerOrgId: string; grantedOrgId?: string }): boolean {
  // (Only IAM_OWNER may add instance members, and it holds user.write in every organization: the instance's clause
  // states the rule, and its mutants are equivalent.)
  // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: as above
  return where.level === "instance" || userOrgId === where.ownerOrgId || userOrgId === where.grantedOrgId || can(caller, "user.write", { orgId: userOrgId });
}
