import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { createLoginClient, eventsOf, storedPassword, usersAs } from "../support/login-client.js";
import { useTestServer } from "../support/server.js";
import type { Actor } from "../support/world.js";

/**
 * The lockout policy (issue 15, item 2; user.proto VerifyPassword, instance.proto Get/SetLockoutPolicy): by default
 * the 10th wrong password in a row locks the user; a right one and UnlockUser set the count back to 0; concurrent
 * wrong passwords are counted one by one and lock exactly at the limit. The policy is data an IAM_OWNER changes.
 * One server for this file, whose policy the tests set in turn (they run in order, each setting what it needs).
 */
const t = useTestServer();
let orgId: string;
let loginClient: Actor;
const GOOD = "Locked-Out-2026";
const WRONG = "Not-The-Password-1";

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Lockout" }));
  loginClient = await createLoginClient(t, orgId, "lockout-login-client");
});

const admin = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
const instance = () => t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken });
const check = (userId: string, password: string, protocol: Protocol = "connect-json-http1") => usersAs(t, loginClient, protocol).verifyPassword({ user: { case: "userId", value: userId }, password });
const stateOf = async (userId: string) => (await admin().getUser({ userId })).user?.state;

let n = 0;
async function newUser() {
  n += 1;
  const { userId } = await admin().createHumanUser({
    userName: `lockout-${n}`,
    profile: { firstName: "Lock", lastName: `Out ${n}` },
    email: { email: `lockout-${n}@example.com`, isEmailVerified: true },
    password: GOOD,
  });
  return userId;
}

async function wrongTimes(userId: string, times: number) {
  for (let i = 0; i < times; i++) expect(await failure(check(userId, WRONG, PROTOCOLS[i % PROTOCOLS.length]!))).toMatchObject({ code: Code.InvalidArgument, reason: "password.invalid" });
}

describe("the default policy: 10 wrong passwords in a row lock the user", () => {
  it("is what GetLockoutPolicy answers while none was set", async () => {
    expect(await instance().getLockoutPolicy({})).toMatchObject({ maxPasswordAttempts: 10, isDefault: true });
  });

  it("9 wrong passwords leave the user ACTIVE; the 10th (answered password.invalid like the others) locks it; then even the right password is user.locked", async () => {
    const userId = await newUser();
    // A token of the user, used (so its principal is cached) before the lockout.
    const { token } = await admin().addPersonalAccessToken({ userId });
    await usersAs(t, { token }).getUser({ userId });
    await wrongTimes(userId, 9);
    expect(await stateOf(userId)).toBe(UserState.ACTIVE);
    expect((await storedPassword(t, userId)).failedAttempts).toBe(9);
    // Wrong passwords that lock nobody leave cached principals alone; the token still works.
    await usersAs(t, { token }).getUser({ userId });
    await wrongTimes(userId, 1);
    expect(await stateOf(userId)).toBe(UserState.LOCKED);
    expect((await storedPassword(t, userId)).failedAttempts).toBe(10);
    expect(await failure(check(userId, GOOD))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.locked" });
    const events = await eventsOf(t, "user", userId);
    const locks = events.filter((e) => e.type === "user.locked");
    expect(locks.map((e) => e.payload)).toEqual([{ cause: "password_attempts", failedAttempts: 10 }]);
    expect(events.filter((e) => e.type === "user.password.check_failed").map((e) => e.payload.cause)).toEqual([...Array(10).fill("wrong_password"), "locked"]);
    // The lock refuses the user's tokens too, from the very next call, as LockUser's does.
    expect(await failure(usersAs(t, { token }).getUser({ userId }))).toMatchObject({ code: Code.Unauthenticated, reason: "user.locked" });
  });

  it("a right password sets the count back to 0", async () => {
    const userId = await newUser();
    await wrongTimes(userId, 9);
    await check(userId, GOOD);
    expect((await storedPassword(t, userId)).failedAttempts).toBe(0);
    await wrongTimes(userId, 9);
    expect(await stateOf(userId)).toBe(UserState.ACTIVE);
  });

  it("UnlockUser lifts the lock and sets the count back to 0: the right password works, and 9 more wrong ones do not lock", async () => {
    const userId = await newUser();
    await wrongTimes(userId, 10);
    expect(await stateOf(userId)).toBe(UserState.LOCKED);
    await admin().unlockUser({ userId });
    expect((await storedPassword(t, userId)).failedAttempts).toBe(0);
    await wrongTimes(userId, 9);
    expect(await stateOf(userId)).toBe(UserState.ACTIVE);
    await check(userId, GOOD);
  });

  it("20 wrong passwords at once lock the user at exactly 10: none counted past the limit, one lock", async () => {
    const userId = await newUser();
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => check(userId, WRONG, PROTOCOLS[i % PROTOCOLS.length]!)));
    const reasons = outcomes.map((o) => (o.status === "rejected" ? (o.reason as { code: Code }).code : "ok"));
    expect(reasons.filter((r) => r === "ok")).toEqual([]);
    expect((await storedPassword(t, userId)).failedAttempts).toBe(10);
    expect(await stateOf(userId)).toBe(UserState.LOCKED);
    const events = await eventsOf(t, "user", userId);
    const counted = events.filter((e) => e.type === "user.password.check_failed" && e.payload.cause === "wrong_password");
    expect(counted.map((e) => e.payload.failedAttempts)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(events.filter((e) => e.type === "user.locked")).toHaveLength(1);
    // Every attempt is an event: the 10 counted, and the others refused as locked.
    expect(events.filter((e) => e.type === "user.password.check_failed")).toHaveLength(20);
    const failures = await Promise.all(outcomes.map((o) => failure(o.status === "rejected" ? Promise.reject(o.reason) : Promise.resolve())));
    expect(failures.filter((f) => f.reason === "password.invalid")).toHaveLength(10);
    expect(failures.filter((f) => f.reason === "user.locked")).toHaveLength(10);
  });
});

describe("the policy is data an IAM_OWNER sets", () => {
  it("SetLockoutPolicy changes the limit at once; 0 never locks; setting it again appends nothing; a stale expected_sequence is aborted", async () => {
    const set = await instance().setLockoutPolicy({ maxPasswordAttempts: 3 });
    expect(await instance().getLockoutPolicy({})).toMatchObject({ maxPasswordAttempts: 3, isDefault: false, details: { sequence: set.details?.sequence } });
    const userId = await newUser();
    await wrongTimes(userId, 2);
    expect(await stateOf(userId)).toBe(UserState.ACTIVE);
    await wrongTimes(userId, 1);
    expect(await stateOf(userId)).toBe(UserState.LOCKED);

    const again = await instance().setLockoutPolicy({ maxPasswordAttempts: 3 });
    expect(again.details?.sequence).toBe(set.details?.sequence);
    expect(await failure(instance().setLockoutPolicy({ maxPasswordAttempts: 5, expectedSequence: set.details!.sequence - 1n }))).toMatchObject({
      code: Code.Aborted,
      reason: "concurrent_modification",
      metadata: { current_sequence: String(set.details!.sequence) },
    });

    await instance().setLockoutPolicy({ maxPasswordAttempts: 0, expectedSequence: set.details!.sequence });
    const free = await newUser();
    await wrongTimes(free, 12);
    expect(await stateOf(free)).toBe(UserState.ACTIVE);
    expect((await storedPassword(t, free)).failedAttempts).toBe(12);

    // Lowered below a user's count: its next wrong password locks it.
    await instance().setLockoutPolicy({ maxPasswordAttempts: 10 });
    await wrongTimes(free, 1);
    expect(await stateOf(free)).toBe(UserState.LOCKED);
    expect((await eventsOf(t, "instance", (await instance().getInstance({})).instanceId)).filter((e) => e.type === "instance.lockout_policy.set").map((e) => e.payload)).toEqual([
      { maxPasswordAttempts: 3 },
      { maxPasswordAttempts: 0 },
      { maxPasswordAttempts: 10 },
    ]);
  });

  it("more than 1000 is request.invalid; only iam.write may set it and iam.read read it", async () => {
    expect(await failure(instance().setLockoutPolicy({ maxPasswordAttempts: 1001 }))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["max_password_attempts"] });
    for (const caller of [loginClient]) {
      const asCaller = t.clients.client(InstanceService, "connect-json-http1", { token: caller.token });
      expect(await failure(asCaller.getLockoutPolicy({}))).toMatchObject({ code: Code.PermissionDenied });
      expect(await failure(asCaller.setLockoutPolicy({ maxPasswordAttempts: 1 }))).toMatchObject({ code: Code.PermissionDenied });
    }
  });
});
