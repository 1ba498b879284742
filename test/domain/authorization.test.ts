import { describe, expect, it } from "vitest";
import { can, hasAnyRoleIn } from "../../src/domain/authorization.js";
import { checkMemberRoles } from "../../src/domain/membership.js";
import type { Membership, Principal } from "../../src/domain/principal.js";
import { ROLES, rolesOfLevel } from "../../src/domain/roles.js";

const principal = (...memberships: Membership[]): Principal => ({ userId: "u", orgId: "home", instanceId: "i", tokenId: "t", memberships });

describe("authorization", () => {
  it("instance roles apply in every organization", () => {
    const p = principal({ level: "instance", scopeId: "i", ownerOrgId: "i", roles: ["IAM_OWNER"] });
    expect(can(p, "user.write", { orgId: "any" })).toBe(true);
    expect(can(p, "project.grant.member.write", { orgId: "any", projectId: "p", grantId: "g" })).toBe(true);
  });

  it("organization roles apply in that organization only", () => {
    const p = principal({ level: "org", scopeId: "o1", ownerOrgId: "o1", roles: ["ORG_OWNER"] });
    expect(can(p, "user.write", { orgId: "o1" })).toBe(true);
    expect(can(p, "user.write", { orgId: "o2" })).toBe(false);
    expect(can(p, "iam.write", { orgId: "o1" })).toBe(false);
  });

  it("project roles apply to that project only", () => {
    const p = principal({ level: "project", scopeId: "p1", ownerOrgId: "o1", roles: ["PROJECT_OWNER"] });
    expect(can(p, "project.app.write", { orgId: "o1", projectId: "p1" })).toBe(true);
    expect(can(p, "project.app.write", { orgId: "o1", projectId: "p2" })).toBe(false);
    expect(can(p, "project.app.write", { orgId: "o1" })).toBe(false);
    expect(can(p, "user.write", { orgId: "o1" })).toBe(false);
  });

  it("project grant roles apply to that grant only, and only to grant members", () => {
    const p = principal({ level: "project_grant", scopeId: "g1", ownerOrgId: "o1", projectId: "p1", roles: ["PROJECT_GRANT_OWNER"] });
    expect(can(p, "project.grant.member.write", { orgId: "o1", projectId: "p1", grantId: "g1" })).toBe(true);
    expect(can(p, "project.grant.member.write", { orgId: "o1", projectId: "p1", grantId: "g2" })).toBe(false);
    expect(can(p, "project.app.read", { orgId: "o1", projectId: "p1", grantId: "g1" })).toBe(false);
  });

  it("a member with no roles has no rights, and no role in the organization", () => {
    const p = principal({ level: "project_grant", scopeId: "g1", ownerOrgId: "o1", projectId: "p1", roles: [] });
    expect(can(p, "project.grant.read", { orgId: "o1", projectId: "p1", grantId: "g1" })).toBe(false);
    expect(hasAnyRoleIn(p, "o1")).toBe(false);
  });

  it("a scoped role counts as a role in the project's organization for x-service-orgid", () => {
    const p = principal({ level: "project", scopeId: "p1", ownerOrgId: "o1", roles: ["PROJECT_OWNER_VIEWER"] });
    expect(hasAnyRoleIn(p, "o1")).toBe(true);
    expect(hasAnyRoleIn(p, "o2")).toBe(false);
  });

  it("every role belongs to exactly one level and member roles are checked per level", () => {
    const all = (["instance", "org", "project", "project_grant"] as const).flatMap(rolesOfLevel);
    expect(all.sort()).toEqual(Object.keys(ROLES).sort());
    expect(checkMemberRoles("project_grant", ["PROJECT_GRANT_OWNER", "PROJECT_GRANT_OWNER"])).toEqual(["PROJECT_GRANT_OWNER"]);
    expect(() => checkMemberRoles("project_grant", ["PROJECT_GRANT_OWNER", "ORG_OWNER"])).toThrow(/project_grant roles/);
    expect(checkMemberRoles("project_grant", [])).toEqual([]);
  });
});
