import { beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import type { Commit } from "../../src/store/commit.js";
import { membershipFingerprint } from "../../src/store/fingerprints.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf } from "./fixtures.js";

// The password writes of a commit (issue 15), on every engine: the hash, the count of wrong passwords and the lockout
// policy. Each conditional write whose condition no longer holds fails the whole commit (aborted
// store.condition_failed), which is what lets VerifyPassword count concurrent wrong passwords one by one and never
// overwrite a password set meanwhile.

type Write = Commit["writes"][number];

const human = (id: string, userName = id): Write => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId: "o1", type: "human", state: "initial", userName, userNameKey: userName.toLowerCase(), email: `${id}@example.com`, emailKey: `${id}@example.com`, emailVerified: true, passwordHash: "$2b$04$old" },
});

async function conditionFailed(result: Promise<unknown>): Promise<void> {
  const error = await result.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(DomainError);
  expect(error).toMatchObject({ kind: "aborted", reason: "store.condition_failed" });
}

describe.each(storeEngines())("password writes on $name", (engine) => {
  const { store } = useStore(engine);
  const commit = (...writes: Write[]) => store().commit(commitOf(writes));
  const user = async (id: string) => (await store().findUserById(id))!;

  beforeEach(async () => {
    await commit({ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } }, human("u1", "Ada"));
  });

  it("a new user has no wrong passwords; findUserByUserNameKey finds it by its key in its instance only", async () => {
    expect((await user("u1")).failedPasswordAttempts).toBe(0);
    expect((await store().findUserByUserNameKey("i1", "ada"))?.id).toBe("u1");
    expect(await store().findUserByUserNameKey("i1", "Ada")).toBeUndefined();
    expect(await store().findUserByUserNameKey("i2", "ada")).toBeUndefined();
  });

  it("user.passwordFailed counts from the count read, locks with `lock`, and fails once the count moved or the user is locked", async () => {
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false });
    expect(await user("u1")).toMatchObject({ failedPasswordAttempts: 1, locked: false });
    await conditionFailed(commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false }));
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 1, lock: true });
    expect(await user("u1")).toMatchObject({ failedPasswordAttempts: 2, locked: true });
    await conditionFailed(commit({ kind: "user.passwordFailed", id: "u1", attempts: 2, lock: false }));
    await conditionFailed(commit({ kind: "user.passwordFailed", id: "gone", attempts: 0, lock: false }));
  });

  it("user.passwordChecked sets the count to 0 while the user is neither locked nor inactive", async () => {
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false });
    await commit({ kind: "user.passwordChecked", id: "u1" });
    expect((await user("u1")).failedPasswordAttempts).toBe(0);
    await commit({ kind: "user.setInactive", id: "u1", inactive: true });
    await conditionFailed(commit({ kind: "user.passwordChecked", id: "u1" }));
    await commit({ kind: "user.setInactive", id: "u1", inactive: false }, { kind: "user.setLocked", id: "u1", locked: true });
    await conditionFailed(commit({ kind: "user.passwordChecked", id: "u1" }));
  });

  it("with verifiedHash, user.passwordChecked and user.passwordFailed hold only while the stored hash is still that one", async () => {
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false, verifiedHash: "$2b$04$old" });
    await commit({ kind: "user.passwordChecked", id: "u1", verifiedHash: "$2b$04$old" });
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false });
    await commit({ kind: "user.setPassword", id: "u1", passwordHash: "$argon2id$reset" });
    await conditionFailed(commit({ kind: "user.passwordChecked", id: "u1", verifiedHash: "$2b$04$old" }));
    await conditionFailed(commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false, verifiedHash: "$2b$04$old" }));
    expect(await user("u1")).toMatchObject({ passwordHash: "$argon2id$reset", failedPasswordAttempts: 0, locked: false });
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false, verifiedHash: "$argon2id$reset" });
    expect((await user("u1")).failedPasswordAttempts).toBe(1);
  });

  it("unlocking sets the count to 0; locking keeps it", async () => {
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false }, { kind: "user.setLocked", id: "u1", locked: true });
    expect((await user("u1")).failedPasswordAttempts).toBe(1);
    await commit({ kind: "user.setLocked", id: "u1", locked: false });
    expect(await user("u1")).toMatchObject({ failedPasswordAttempts: 0, locked: false });
  });

  it("user.setPassword sets the hash, resets the count, keeps or sets change_required, activates on request", async () => {
    await commit({ kind: "user.passwordFailed", id: "u1", attempts: 0, lock: false });
    await commit({ kind: "user.setPassword", id: "u1", passwordHash: "$argon2id$new", changeRequired: true });
    expect(await user("u1")).toMatchObject({ passwordHash: "$argon2id$new", failedPasswordAttempts: 0, passwordChangeRequired: true, state: "initial" });
    await commit({ kind: "user.setPassword", id: "u1", passwordHash: "$argon2id$newer", activate: true });
    expect(await user("u1")).toMatchObject({ passwordHash: "$argon2id$newer", passwordChangeRequired: true, state: "active" });
    await conditionFailed(commit({ kind: "user.setPassword", id: "gone", passwordHash: "x" }));
  });

  it("with previousHash it replaces only that hash (null: none), so a rehash never overwrites a newer password", async () => {
    await conditionFailed(commit({ kind: "user.setPassword", id: "u1", passwordHash: "$argon2id$rehash", previousHash: "$2b$04$other" }));
    await conditionFailed(commit({ kind: "user.setPassword", id: "u1", passwordHash: "$argon2id$rehash", previousHash: null }));
    await commit({ kind: "user.setPassword", id: "u1", passwordHash: "$argon2id$rehash", previousHash: "$2b$04$old" });
    expect((await user("u1")).passwordHash).toBe("$argon2id$rehash");
    await commit(human("u2"), { kind: "user.setPassword", id: "u2", passwordHash: "$argon2id$first", previousHash: "$2b$04$old" });
    const withoutHash: Write = { kind: "user.insert", row: { id: "u3", instanceId: "i1", orgId: "o1", type: "human", state: "initial", userName: "u3", userNameKey: "u3" } };
    await commit(withoutHash, { kind: "user.setPassword", id: "u3", passwordHash: "$argon2id$first", previousHash: null });
    expect((await user("u3")).passwordHash).toBe("$argon2id$first");
  });

  it("with checkedMemberships it fails once the user's roles changed", async () => {
    const none = membershipFingerprint([]);
    await commit({ kind: "user.setPassword", id: "u1", passwordHash: "a", checkedMemberships: none });
    await commit({ kind: "membership.insert", row: { id: "m1", userId: "u1", level: "org", scopeId: "o1", ownerOrgId: "o1", projectId: null, roles: ["ORG_OWNER"] } });
    await conditionFailed(commit({ kind: "user.setPassword", id: "u1", passwordHash: "b", checkedMemberships: none }));
    expect((await user("u1")).passwordHash).toBe("a");
  });

  it("lockoutPolicy.put inserts the instance's policy, then replaces it", async () => {
    expect(await store().getLockoutPolicy("i1")).toBeUndefined();
    await commit({ kind: "lockoutPolicy.put", row: { instanceId: "i1", maxPasswordAttempts: 3 } });
    expect(await store().getLockoutPolicy("i1")).toEqual({ instanceId: "i1", maxPasswordAttempts: 3 });
    await commit({ kind: "lockoutPolicy.put", row: { instanceId: "i1", maxPasswordAttempts: 0 } });
    expect(await store().getLockoutPolicy("i1")).toEqual({ instanceId: "i1", maxPasswordAttempts: 0 });
  });

  it("a code records the address it was mailed to (null when not given)", async () => {
    await commit(
      { kind: "code.replace", row: { id: "c1", userId: "u1", kind: "init", digest: "d", expiresAt: 1, attempts: 0, usedAt: null, emailKey: "u1@example.com" } },
      { kind: "code.replace", row: { id: "c2", userId: "u1", kind: "email", digest: "d", expiresAt: 1, attempts: 0, usedAt: null } },
    );
    expect((await store().findCode("u1", "init"))?.emailKey).toBe("u1@example.com");
    expect((await store().findCode("u1", "email"))?.emailKey).toBeNull();
  });
});
