/**
 * THE table of roles and what they allow. Every authorization decision in Gatehouse derives from it:
 * change a role here and it changes everywhere.
 */
export type Permission =
  | "iam.read"
  | "iam.write"
  | "iam.member.write"
  | "events.read"
  | "org.create"
  | "org.read"
  | "org.write"
  | "org.member.write"
  | "org.idp.read"
  | "org.idp.write"
  | "user.read"
  | "user.write"
  /** Checking a user's password (VerifyPassword): what a login front end needs, instance-wide, and nothing else. */
  | "user.password.check"
  | "project.create"
  | "project.read"
  | "project.write"
  | "project.role.write"
  | "project.member.write"
  | "project.grant.read"
  | "project.grant.write"
  | "project.grant.member.read"
  | "project.grant.member.write"
  | "project.app.read"
  | "project.app.write";

/** Where a membership applies: the whole instance, one organization, one project or one project grant. */
export type MembershipLevel = "instance" | "org" | "project" | "project_grant";

const projectReader: Permission[] = ["project.read", "project.grant.read", "project.grant.member.read", "project.app.read"];
const projectWriter: Permission[] = [
  ...projectReader,
  "project.write",
  "project.role.write",
  "project.member.write",
  "project.grant.write",
  "project.grant.member.write",
  "project.app.write",
];
const orgReader: Permission[] = ["org.read", "org.idp.read", "user.read", "events.read", ...projectReader];
const orgWriter: Permission[] = [
  ...orgReader,
  "org.write",
  "org.member.write",
  "org.idp.write",
  "user.write",
  "project.create",
  ...projectWriter,
];

interface RoleDefinition {
  level: MembershipLevel;
  permissions: readonly Permission[];
}

export const ROLES = {
  IAM_OWNER: { level: "instance", permissions: ["iam.read", "iam.write", "iam.member.write", "org.create", "user.password.check", ...orgWriter] },
  IAM_OWNER_VIEWER: { level: "instance", permissions: ["iam.read", ...orgReader] },
  // A login front end's service account: it may check passwords of every user of the instance (a password oracle,
  // so instance-scoped only, and granted only by whoever holds it: IAM_OWNER) and do nothing else — no reads, so a
  // stolen login-client token reveals no user data beyond the answers VerifyPassword gives.
  IAM_LOGIN_CLIENT: { level: "instance", permissions: ["user.password.check"] },
  ORG_OWNER: { level: "org", permissions: orgWriter },
  ORG_OWNER_VIEWER: { level: "org", permissions: orgReader },
  ORG_USER_MANAGER: { level: "org", permissions: ["org.read", "user.read", "user.write"] },
  ORG_SETTINGS_MANAGER: { level: "org", permissions: ["org.read", "org.write", "org.idp.read", "org.idp.write"] },
  PROJECT_OWNER: { level: "project", permissions: projectWriter },
  PROJECT_OWNER_VIEWER: { level: "project", permissions: projectReader },
  PROJECT_GRANT_OWNER: {
    level: "project_grant",
    permissions: ["project.grant.read", "project.grant.member.read", "project.grant.member.write"],
  },
  PROJECT_GRANT_OWNER_VIEWER: { level: "project_grant", permissions: ["project.grant.read", "project.grant.member.read"] },
} as const satisfies Record<string, RoleDefinition>;

export type RoleName = keyof typeof ROLES;

const permissionSets = new Map<string, ReadonlySet<Permission>>(
  Object.entries(ROLES).map(([name, role]) => [name, new Set<Permission>(role.permissions)]),
);

export function roleGrants(role: string, permission: Permission): boolean {
  return permissionSets.get(role)?.has(permission) ?? false;
}

/** Every permission a role grants; none for an unknown role name. */
export function permissionsOf(role: string): readonly Permission[] {
  return [...(permissionSets.get(role) ?? [])];
}

/** The roles that may be granted at `level`, for error messages and validation. */
export function rolesOfLevel(level: MembershipLevel): string[] {
  return Object.entries(ROLES)
    .filter(([, role]) => role.level === level)
    .map(([name]) => name);
}
