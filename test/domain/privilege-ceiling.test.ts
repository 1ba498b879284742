import { describe, expect, it } from "vitest";
import { requireCanGrantRoles, requireCoversPrincipal } from "../../src/domain/authorization.js";
import { DomainError } from "../../src/domain/errors.js";
import type { Membership, Principal } from "../../src/domain/principal.js";

const principal = (...memberships: Membership[]): Principal => ({ userId: "caller", orgId: "o1", instanceId: "i", tokenId: "t", memberships });
const instance = (role: string): Membership => ({ level: "instance", scopeId: "i", ownerOrgId: "i", roles: [role] });
const org = (orgId: string, ...roles: string[]): Membership => ({ level: "org", scopeId: orgId, ownerOrgId: orgId, roles });
const project = (orgId: string, projectId: string, role: string): Membership => ({ level: "project", scopeId: projectId, ownerOrgId: orgId, roles: [role] });
const grant = (orgId: string, projectId: string, grantId: string, role: string): Membership => ({ level: "project_grant", scopeId: grantId, ownerOrgId: orgId, projectId, roles: [role] });

function denial(action: () => void): DomainError {
  try {
    action();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  return expect.fail("expected a permission_denied");
}

describe("privilege ceiling over a principal", () => {
  it("a target without roles is within everyone's ceiling", () => {
    expect(() => requireCoversPrincipal(principal(), [])).not.toThrow();
    expect(() => requireCoversPrincipal(principal(), [org("o1")])).not.toThrow();
  });

  it("an instance owner is above an organization owner and a user manager, with the missing permission named", () => {
    for (const caller of [principal(org("o1", "ORG_OWNER")), principal(org("o1", "ORG_USER_MANAGER"))]) {
      const error = denial(() => requireCoversPrincipal(caller, [instance("IAM_OWNER")]));
      expect([error.kind, error.reason, error.metadata["scope"]]).toEqual(["permission_denied", "principal.privileged", "instance"]);
      expect(error.metadata["permission"]).toBeDefined();
    }
    expect(() => requireCoversPrincipal(principal(instance("IAM_OWNER")), [instance("IAM_OWNER")])).not.toThrow();
  });

  it("an instance-wide viewer role needs the permissions instance-wide, not in one organization", () => {
    expect(denial(() => requireCoversPrincipal(principal(org("o1", "ORG_OWNER")), [instance("IAM_OWNER_VIEWER")])).metadata["permission"]).toBe("iam.read");
    expect(() => requireCoversPrincipal(principal(instance("IAM_OWNER")), [instance("IAM_OWNER_VIEWER")])).not.toThrow();
  });

  it("holding a role's permissions in one organization does not cover the same role in another", () => {
    const caller = principal(org("o1", "ORG_OWNER"));
    expect(() => requireCoversPrincipal(caller, [org("o1", "ORG_OWNER")])).not.toThrow();
    expect(denial(() => requireCoversPrincipal(caller, [org("o1", "ORG_OWNER"), org("o2", "ORG_USER_MANAGER")])).metadata).toMatchObject({ scope: "org" });
  });

  it("a user manager covers a peer manager and an organization viewer's reads it lacks are named", () => {
    const manager = principal(org("o1", "ORG_USER_MANAGER"));
    expect(() => requireCoversPrincipal(manager, [org("o1", "ORG_USER_MANAGER")])).not.toThrow();
    expect(denial(() => requireCoversPrincipal(manager, [org("o1", "ORG_OWNER_VIEWER")])).metadata["permission"]).toBe("org.idp.read");
  });

  it("project and grant roles are compared in their own project and grant", () => {
    const projectOwner = principal(project("o1", "p1", "PROJECT_OWNER"));
    expect(() => requireCoversPrincipal(projectOwner, [project("o1", "p1", "PROJECT_OWNER_VIEWER")])).not.toThrow();
    expect(() => requireCoversPrincipal(projectOwner, [grant("o1", "p1", "g1", "PROJECT_GRANT_OWNER")])).not.toThrow();
    expect(denial(() => requireCoversPrincipal(projectOwner, [project("o1", "p2", "PROJECT_OWNER_VIEWER")])).metadata["scope"]).toBe("project");
    const grantOwner = principal(grant("o1", "p1", "g1", "PROJECT_GRANT_OWNER"));
    expect(() => requireCoversPrincipal(grantOwner, [grant("o1", "p1", "g1", "PROJECT_GRANT_OWNER")])).not.toThrow();
    expect(denial(() => requireCoversPrincipal(grantOwner, [grant("o1", "p1", "g2", "PROJECT_GRANT_OWNER_VIEWER")])).metadata["scope"]).toBe("project_grant");
    expect(denial(() => requireCoversPrincipal(grantOwner, [project("o1", "p1", "PROJECT_OWNER_VIEWER")])).reason).toBe("principal.privileged");
  });
});

describe("privilege ceiling on granting roles", () => {
  it("a role is grantable only by a caller holding each of its permissions in that scope", () => {
    const error = denial(() => requireCanGrantRoles(principal(org("o1", "ORG_SETTINGS_MANAGER")), ["ORG_USER_MANAGER"], org("o1")));
    expect([error.kind, error.reason, error.metadata["role"], error.metadata["permission"]]).toEqual(["permission_denied", "role.not_grantable", "ORG_USER_MANAGER", "user.read"]);
    expect(() => requireCanGrantRoles(principal(org("o1", "ORG_OWNER")), ["ORG_OWNER", "ORG_USER_MANAGER"], org("o1"))).not.toThrow();
    expect(denial(() => requireCanGrantRoles(principal(org("o1", "ORG_OWNER")), ["ORG_OWNER"], org("o2"))).metadata["scope"]).toBe("org");
    expect(denial(() => requireCanGrantRoles(principal(org("o1", "ORG_OWNER")), ["IAM_OWNER_VIEWER"], instance(""))).metadata["scope"]).toBe("instance");
  });

  it("grant roles are grantable by an owner of the grant, its project or the organization, not of another grant", () => {
    const target = grant("o1", "p1", "g1", "");
    for (const caller of [grant("o1", "p1", "g1", "PROJECT_GRANT_OWNER"), project("o1", "p1", "PROJECT_OWNER"), org("o1", "ORG_OWNER")]) {
      expect(() => requireCanGrantRoles(principal(caller), ["PROJECT_GRANT_OWNER"], target)).not.toThrow();
    }
    expect(denial(() => requireCanGrantRoles(principal(grant("o1", "p1", "g2", "PROJECT_GRANT_OWNER")), ["PROJECT_GRANT_OWNER"], target)).reason).toBe("role.not_grantable");
    expect(denial(() => requireCanGrantRoles(principal(grant("o1", "p1", "g1", "PROJECT_GRANT_OWNER_VIEWER")), ["PROJECT_GRANT_OWNER"], target)).metadata["permission"]).toBe("project.grant.member.write");
  });
});
