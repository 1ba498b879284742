import { describe, expect, it } from "vitest";
import { authorize, can, canInstanceWide, hasAnyRoleIn, missingForRoles, requireCanGrantRoles, requireCoversPrincipal, scopeOfMembership } from "../../src/domain/authorization.js";
import { DomainError, invalidArgument } from "../../src/domain/errors.js";
import { checkMemberRoles } from "../../src/domain/membership.js";
import type { Membership, Principal } from "../../src/domain/principal.js";
import { type Permission, permissionsOf, roleGrants, ROLES, rolesOfLevel } from "../../src/domain/roles.js";
import { thrownBy } from "../support/thrown.js";

const principal = (...memberships: Membership[]): Principal => ({ userId: "u", orgId: "o1", instanceId: "i", tokenId: "t", memberships });
const project = (orgId: string, projectId: string, ...roles: string[]): Membership => ({ level: "project", scopeId: projectId, ownerOrgId: orgId, roles });
const grant = (orgId: string, grantId: string, ...roles: string[]): Membership => ({ level: "project_grant", scopeId: grantId, ownerOrgId: orgId, projectId: "p1", roles });

const refusal = (action: () => unknown): DomainError => thrownBy(DomainError, action);

describe("the role table (API.md: permissions each operation needs)", () => {
  const holders = (permission: Permission) => Object.keys(ROLES).filter((role) => roleGrants(role, permission)).sort();

  it.each([
    ["user.write", ["IAM_OWNER", "ORG_OWNER", "ORG_USER_MANAGER"]],
    ["iam.write", ["IAM_OWNER"]],
    ["org.idp.write", ["IAM_OWNER", "ORG_OWNER", "ORG_SETTINGS_MANAGER"]],
    ["project.grant.member.write", ["IAM_OWNER", "ORG_OWNER", "PROJECT_GRANT_OWNER", "PROJECT_OWNER"]],
    ["project.app.write", ["IAM_OWNER", "ORG_OWNER", "PROJECT_OWNER"]],
    // Issue 15: a password oracle, for login front ends only.
    ["user.password.check", ["IAM_LOGIN_CLIENT", "IAM_OWNER"]],
  ] as const)("%s is held by %j", (permission, roles) => {
    expect(holders(permission)).toEqual([...roles].sort());
  });

  it("viewer roles only read", () => {
    for (const viewer of ["IAM_OWNER_VIEWER", "ORG_OWNER_VIEWER", "PROJECT_OWNER_VIEWER", "PROJECT_GRANT_OWNER_VIEWER"]) {
      expect(permissionsOf(viewer).length).toBeGreaterThan(0);
      for (const permission of permissionsOf(viewer)) expect(permission).toMatch(/\.read$/);
    }
  });

  it("IAM_LOGIN_CLIENT holds user.password.check and nothing else", () => {
    expect(permissionsOf("IAM_LOGIN_CLIENT")).toEqual(["user.password.check"]);
  });

  it("an unknown role name grants nothing", () => {
    expect(roleGrants("ROOT", "iam.write")).toBe(false);
    expect(permissionsOf("ROOT")).toEqual([]);
    expect(() => requireCanGrantRoles(principal(), ["ROOT"], { level: "org", scopeId: "o1", ownerOrgId: "o1" })).not.toThrow();
    expect(missingForRoles(principal(), ["ROOT"], { level: "org", scopeId: "o1", ownerOrgId: "o1" })).toBeUndefined();
  });

  it("lists the roles of each level", () => {
    expect(rolesOfLevel("instance")).toEqual(["IAM_OWNER", "IAM_OWNER_VIEWER", "IAM_LOGIN_CLIENT"]);
    expect(rolesOfLevel("project_grant")).toEqual(["PROJECT_GRANT_OWNER", "PROJECT_GRANT_OWNER_VIEWER"]);
  });
});

describe("scoped roles count only in the organization that owns their project", () => {
  it("a project role does not apply to a same-id project of another organization", () => {
    const p = principal(project("o1", "p1", "PROJECT_OWNER"));
    expect(can(p, "project.write", { orgId: "o1", projectId: "p1" })).toBe(true);
    expect(can(p, "project.write", { orgId: "o2", projectId: "p1" })).toBe(false);
  });

  it("a grant role does not apply to a same-id grant of another organization", () => {
    const p = principal(grant("o1", "g1", "PROJECT_GRANT_OWNER"));
    expect(can(p, "project.grant.member.write", { orgId: "o1", projectId: "p1", grantId: "g1" })).toBe(true);
    expect(can(p, "project.grant.member.write", { orgId: "o2", projectId: "p1", grantId: "g1" })).toBe(false);
  });

  it("any role counts for x-service-orgid in its owner organization, an instance role in every one", () => {
    expect(hasAnyRoleIn(principal(grant("o1", "g1", "PROJECT_GRANT_OWNER_VIEWER")), "o1")).toBe(true);
    expect(hasAnyRoleIn(principal(grant("o1", "g1", "PROJECT_GRANT_OWNER_VIEWER")), "o2")).toBe(false);
    expect(hasAnyRoleIn(principal({ level: "instance", scopeId: "i", ownerOrgId: "i", roles: ["IAM_OWNER_VIEWER"] }), "o7")).toBe(true);
    expect(hasAnyRoleIn(principal({ level: "instance", scopeId: "i", ownerOrgId: "i", roles: [] }), "o7")).toBe(false);
  });

  it("instance-wide permissions come from instance roles only", () => {
    const viewer = principal({ level: "instance", scopeId: "i", ownerOrgId: "i", roles: ["IAM_OWNER_VIEWER"] });
    expect(canInstanceWide(viewer, "iam.read")).toBe(true);
    expect(canInstanceWide(viewer, "iam.write")).toBe(false);
    expect(canInstanceWide(principal({ level: "org", scopeId: "o1", ownerOrgId: "o1", roles: ["ORG_OWNER"] }), "org.read")).toBe(false);
  });

  it("a grant membership's scope carries its project when known", () => {
    expect(scopeOfMembership({ level: "project_grant", scopeId: "g1", ownerOrgId: "o1", projectId: "p1" })).toEqual({ orgId: "o1", projectId: "p1", grantId: "g1" });
    expect(scopeOfMembership({ level: "project_grant", scopeId: "g1", ownerOrgId: "o1" })).toEqual({ orgId: "o1", grantId: "g1" });
    expect(scopeOfMembership({ level: "instance", scopeId: "i", ownerOrgId: "i" })).toBe("instance");
  });
});

describe("denials say what is missing", () => {
  it("authorize names the missing permission", () => {
    const p = principal(project("o1", "p1", "PROJECT_OWNER_VIEWER"));
    expect(() => authorize(p, "project.read", { orgId: "o1", projectId: "p1" })).not.toThrow();
    const error = refusal(() => authorize(p, "project.write", { orgId: "o1", projectId: "p1" }));
    expect(error).toMatchObject({ kind: "permission_denied", reason: "permission.denied", metadata: { permission: "project.write" } });
    expect(error.message).toContain("project.write");
  });

  it("the privilege ceilings explain themselves", () => {
    const viewer = principal(project("o1", "p1", "PROJECT_OWNER_VIEWER"));
    const privileged = refusal(() => requireCoversPrincipal(viewer, [project("o1", "p1", "PROJECT_OWNER")]));
    expect(privileged).toMatchObject({ reason: "principal.privileged", metadata: { permission: "project.write", scope: "project" } });
    expect(privileged.message).toMatch(/permission/);
    const notGrantable = refusal(() => requireCanGrantRoles(viewer, ["PROJECT_OWNER"], { level: "project", scopeId: "p1", ownerOrgId: "o1" }));
    expect(notGrantable).toMatchObject({ reason: "role.not_grantable", metadata: { role: "PROJECT_OWNER", permission: "project.write", scope: "project" } });
    expect(notGrantable.message).toContain("PROJECT_OWNER");
    expect(notGrantable.message).toContain("project.write");
  });

  it("a member role of the wrong level is named with the roles allowed there", () => {
    const error = refusal(() => checkMemberRoles("project_grant", ["PROJECT_GRANT_OWNER", "ORG_OWNER", "NOPE"]));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "member.role_invalid", metadata: { roles: "ORG_OWNER,NOPE" } });
    expect(error.violations.map((v) => [v.field, v.rule])).toEqual([["roles[1]", "member.role_invalid"], ["roles[2]", "member.role_invalid"]]);
    // Each allowed role appears as a word of its own, in the description and the message.
    for (const text of [error.violations[0]!.description, error.message]) {
      expect(text).toMatch(/\bPROJECT_GRANT_OWNER\b/);
      expect(text).toMatch(/\bPROJECT_GRANT_OWNER_VIEWER\b/);
    }
    expect(error.violations[0]!.description).toContain("ORG_OWNER");
  });
});

describe("domain errors", () => {
  it("an invalid_argument without field violations or metadata carries none", () => {
    expect(invalidArgument("x.y", "bad")).toMatchObject({ kind: "invalid_argument", reason: "x.y", message: "bad", violations: [], metadata: {} });
  });
});
