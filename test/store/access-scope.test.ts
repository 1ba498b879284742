import { describe, expect, it } from "vitest";
import { createAccessVersions } from "../../src/store/access-versions.js";
import { accessScope, changesAccess, type RowWrite } from "../../src/store/commit.js";
import { commitOf } from "./fixtures.js";

/**
 * Whose cached principals a commit may change (store/commit.ts accessScope), and the versions a principal cache
 * compares (store/access-versions.ts): a principal is its token, its user and that user's organization and
 * memberships, so a write naming one user changes that user's principals only; one naming no user may change anyone's.
 */
const member = (userId: string): RowWrite => ({
  kind: "membership.insert",
  row: { id: `m-${userId}`, userId, level: "org", scopeId: "o1", ownerOrgId: "o1", projectId: null, roles: ["ORG_OWNER"] },
});
const locked = (id: string): RowWrite => ({ kind: "user.setLocked", id, locked: true });
const fields = { firstName: "A", lastName: "B", nickName: "", displayName: "A B", preferredLanguage: "", gender: 0, email: "a@example.com", emailKey: "a@example.com", emailVerified: true, phone: null, phoneVerified: null };

describe("whose principals a commit may change", () => {
  const scope = (...writes: RowWrite[]) => accessScope(commitOf(writes));

  it("names the user of a user-row write, of a new membership and of a removal of all their tokens", () => {
    expect(scope(member("u1"))).toEqual(["u1"]);
    expect(scope({ kind: "token.deleteOfUser", userId: "u2" })).toEqual(["u2"]);
    const userRowWrites: RowWrite[] = [
      { kind: "user.emailChange", id: "u3", email: "e@example.com", emailKey: "e@example.com", verified: false },
      { kind: "user.emailVerified", id: "u3", activate: true },
      { kind: "user.importUpdate", id: "u3", fields: fields as never, activate: false },
      { kind: "user.setInactive", id: "u3", inactive: true },
      locked("u3"),
      { kind: "user.setPassword", id: "u3", passwordHash: "h", activate: true, checkedMemberships: "x" },
      { kind: "user.passwordFailed", id: "u3", attempts: 5, lock: true },
      { kind: "user.delete", id: "u3" },
    ];
    for (const write of userRowWrites) expect({ kind: write.kind, scope: scope(write) }).toEqual({ kind: write.kind, scope: write.kind === "user.setPassword" ? [] : ["u3"] });
    expect(scope(member("u1"), locked("u2"))).toEqual(["u1", "u2"]);
  });

  it("names nobody for writes no existing principal is made of", () => {
    expect(scope({ kind: "user.passwordFailed", id: "u1", attempts: 1, lock: false })).toEqual([]);
    expect(scope({ kind: "user.passwordChecked", id: "u1" })).toEqual([]);
    expect(scope({ kind: "token.insert", row: { id: "t1", userId: "u1", secretHash: "h", expiresAt: null, createdAt: 0, issuerUserId: null } })).toEqual([]);
    expect(scope({ kind: "application.rename", id: "a1", name: "n", nameKey: "n" })).toEqual([]);
  });

  it("says everyone for an organization's state, a removed membership or token, even beside writes naming users", () => {
    expect(scope({ kind: "organization.setState", id: "o1", state: "inactive" })).toBe("everyone");
    expect(scope(member("u1"), { kind: "membership.delete", id: "m-u2" })).toBe("everyone");
    expect(scope({ kind: "token.delete", id: "t1" }, locked("u2"))).toBe("everyone");
  });

  it("counts a commit as changing access when any one of its writes does", () => {
    expect(changesAccess(commitOf([{ kind: "application.rename", id: "a1", name: "n", nameKey: "n" }, locked("u1")]))).toBe(true);
    expect(changesAccess(commitOf([{ kind: "application.rename", id: "a1", name: "n", nameKey: "n" }]))).toBe(false);
  });
});

describe("access versions", () => {
  it("moves a user's version with a commit naming that user or everyone, and not with one naming another user", () => {
    const versions = createAccessVersions();
    const [u1, u2] = [versions.of("u1"), versions.of("u2")];
    versions.note(commitOf([member("u1")]));
    expect(versions.of("u1")).not.toBe(u1);
    expect(versions.of("u2")).toBe(u2);
    const afterOne = [versions.of("u1"), versions.of("u2")];
    versions.note(commitOf([{ kind: "organization.setState", id: "o1", state: "inactive" }]));
    expect(versions.of("u1")).not.toBe(afterOne[0]);
    expect(versions.of("u2")).not.toBe(afterOne[1]);
  });

  it("moves the version of every principal with every access-changing commit, and with no other", () => {
    const versions = createAccessVersions();
    const start = versions.of();
    versions.note(commitOf([{ kind: "application.rename", id: "a1", name: "n", nameKey: "n" }]));
    expect(versions.of()).toBe(start);
    versions.note(commitOf([locked("u1")]));
    const afterUser = versions.of();
    expect(afterUser).not.toBe(start);
    versions.note(commitOf([{ kind: "token.delete", id: "t1" }]));
    expect(versions.of()).not.toBe(afterUser);
  });

  it("spreads users over buckets: of a hundred users, one's change leaves most others' versions", () => {
    const versions = createAccessVersions();
    const users = Array.from({ length: 100 }, (_, i) => `user-${i}-${"x".repeat(i % 7)}`);
    const before = users.map((user) => versions.of(user));
    versions.note(commitOf([locked(users[0]!)]));
    const moved = users.filter((user, i) => versions.of(user) !== before[i]);
    expect(moved).toContain(users[0]);
    expect(moved.length).toBeLessThan(5);
  });
});
