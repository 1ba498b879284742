import { describe, expect, it } from "vitest";
import { canInstanceWide, requireCoversPrincipal } from "../../src/domain/authorization.js";
import type { Membership, Principal } from "../../src/domain/principal.js";

const principal = (...memberships: Membership[]): Principal => ({ userId: "u", orgId: "home", instanceId: "i", tokenId: "t", memberships });
const instanceMember = (...roles: string[]): Membership => ({ level: "instance", scopeId: "i", ownerOrgId: "i", roles });

/** The role table: a member holds the permissions of each of its roles; one role granting a permission is enough. */
describe("instance-wide permissions", () => {
  it("one of a member's instance roles granting the permission is enough", () => {
    expect(canInstanceWide(principal(instanceMember("IAM_OWNER_VIEWER", "IAM_OWNER")), "iam.write")).toBe(true);
    expect(canInstanceWide(principal(instanceMember("IAM_OWNER", "IAM_OWNER_VIEWER")), "iam.write")).toBe(true);
    expect(canInstanceWide(principal(instanceMember("IAM_OWNER_VIEWER")), "iam.write")).toBe(false);
  });

  it("a caller holding a viewer role beside IAM_OWNER covers another instance owner (privilege ceiling)", () => {
    const caller = principal(instanceMember("IAM_OWNER_VIEWER", "IAM_OWNER"));
    expect(() => requireCoversPrincipal(caller, [instanceMember("IAM_OWNER")])).not.toThrow();
  });
});
