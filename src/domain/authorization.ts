import { permissionDenied } from "./errors.js";
import type { Membership, Principal } from "./principal.js";
import { type Permission, roleGrants } from "./roles.js";

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
