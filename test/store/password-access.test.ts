import { describe, expect, it } from "vitest";
import { changesAccess, type RowWrite } from "../../src/store/commit.js";
import { commitOf } from "./fixtures.js";

/**
 * Which password writes drop the principal caches (store/commit.ts changesAccess): every VerifyPassword commits one,
 * so only a wrong password that locks the user may; a hash or a count is nothing authentication by token reads.
 */
describe("password writes and the principal caches", () => {
  const changes = (write: RowWrite) => changesAccess(commitOf([write]));

  it("a right password, a new or rehashed password and a wrong password that locks nobody leave them", () => {
    expect(changes({ kind: "user.passwordChecked", id: "u1" })).toBe(false);
    expect(changes({ kind: "user.setPassword", id: "u1", passwordHash: "h", previousHash: "old" })).toBe(false);
    expect(changes({ kind: "user.passwordFailed", id: "u1", attempts: 3, lock: false })).toBe(false);
    expect(changes({ kind: "lockoutPolicy.put", row: { instanceId: "i1", maxPasswordAttempts: 3 } })).toBe(false);
  });

  it("a wrong password that locks the user drops them, as LockUser does", () => {
    expect(changes({ kind: "user.passwordFailed", id: "u1", attempts: 9, lock: true })).toBe(true);
    expect(changes({ kind: "user.setLocked", id: "u1", locked: true })).toBe(true);
  });
});
