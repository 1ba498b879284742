import { describe, expect, it } from "vitest";
import { membershipFingerprint, tokenFingerprint } from "../../src/store/fingerprints.js";

// The fingerprints a conditional write compares (src/store/fingerprints.ts): equal exactly when what the command
// checked is unchanged. They describe a set — the order rows or roles are read in does not matter — and they tell
// apart any two different sets. The token fingerprint covers only tokens issued by someone else than the user.

describe("the fingerprint of a user's memberships", () => {
  it("does not depend on the order of the roles", () => {
    expect(membershipFingerprint([{ id: "m1", roles: ["ORG_OWNER", "ORG_USER_MANAGER"] }])).toBe(membershipFingerprint([{ id: "m1", roles: ["ORG_USER_MANAGER", "ORG_OWNER"] }]));
  });

  it("changes when a membership's roles change", () => {
    expect(membershipFingerprint([{ id: "m1", roles: ["ORG_OWNER"] }])).not.toBe(membershipFingerprint([{ id: "m1", roles: ["ORG_USER_MANAGER"] }]));
    expect(membershipFingerprint([{ id: "m1", roles: ["ORG_OWNER"] }])).not.toBe(membershipFingerprint([{ id: "m1", roles: [] }]));
  });

  it("tells two roles apart from one role whose name is both joined", () => {
    expect(membershipFingerprint([{ id: "m1", roles: ["A", "B"] }])).not.toBe(membershipFingerprint([{ id: "m1", roles: ["AB"] }]));
  });

  it("tells two memberships apart from one", () => {
    expect(membershipFingerprint([{ id: "m1", roles: ["A"] }, { id: "m2", roles: ["B"] }])).not.toBe(membershipFingerprint([{ id: "m1", roles: ["Am2:B"] }]));
  });
});

describe("the fingerprint of a user's tokens", () => {
  it("does not depend on the order the tokens are read in", () => {
    const a = { id: "t-a", issuerUserId: "admin" };
    const b = { id: "t-b", issuerUserId: "admin" };
    expect(tokenFingerprint("u1", [a, b])).toBe(tokenFingerprint("u1", [b, a]));
  });

  it("tells two tokens apart from one whose id is both joined", () => {
    const byAdmin = (id: string) => ({ id, issuerUserId: "admin" });
    expect(tokenFingerprint("u1", [byAdmin("t1"), byAdmin("t2")])).not.toBe(tokenFingerprint("u1", [byAdmin("t1t2")]));
  });

  it("covers only tokens issued by someone else: the user's own and the system's do not count", () => {
    const none = tokenFingerprint("u1", []);
    expect(tokenFingerprint("u1", [{ id: "t-own", issuerUserId: "u1" }, { id: "t-system", issuerUserId: null }])).toBe(none);
    expect(tokenFingerprint("u1", [{ id: "t-other", issuerUserId: "admin" }])).not.toBe(none);
  });
});
