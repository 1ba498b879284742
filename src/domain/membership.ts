import { invalidArgument } from "./errors.js";
import { type MembershipLevel, rolesOfLevel } from "./roles.js";

/**
 * Checks that every role can be granted at `level`, naming each bad one; returns them de-duplicated.
 * An empty list is valid where the level allows it (a member with no rights).
 */
export function checkMemberRoles(level: MembershipLevel, roles: string[]): string[] {
  const allowed = rolesOfLevel(level);
  const violations = roles.flatMap((role, index) =>
    allowed.includes(role)
      ? []
      : [{ field: `roles[${index}]`, description: `"${role}" is not one of ${allowed.join(", ")}`, rule: "member.role_invalid" }],
  );
  if (violations.length > 0) {
    throw invalidArgument("member.role_invalid", `roles must be ${level} roles: ${allowed.join(", ")}`, violations, {
      roles: roles.filter((role) => !allowed.includes(role)).join(","),
    });
  }
  return [...new Set(roles)];
}
