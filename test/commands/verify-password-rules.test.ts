import bcrypt from "bcryptjs";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { verifyPassword } from "../../src/commands/verify-password.js";
import type { Caller, Deps } from "../../src/context.js";
import { DomainError } from "../../src/domain/errors.js";
import { createLoginClient, DEFAULT_ARGON2ID, eventsOf, storedPassword } from "../support/login-client.js";
import { useTestServer } from "../support/server.js";
import { ownerCaller } from "../support/slow-store.js";
import { adminCaller, interleavedDeps, racingDeps, typed } from "./rules-support.js";

/**
 * VerifyPassword's conditional writes (src/commands/verify-password.ts), in-process against the running server's
 * store with another call landing between the check's reads and its commit: a rehash never overwrites a password
 * set meanwhile, a right password does not succeed past a lock set meanwhile, and lost writes are judged again.
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;
const OLD = "Old-Password-1";
const NEW = "New-Password-2";

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Password rules" }));
  const loginClient = await createLoginClient(t, orgId, "rules-login-client");
  const owner = await adminCaller(t);
  // The login client as an in-process caller: its one instance role, nothing else.
  caller = { principal: { ...owner.principal, userId: loginClient.userId, memberships: [{ level: "instance", scopeId: owner.principal.instanceId, ownerOrgId: owner.principal.instanceId, roles: ["IAM_LOGIN_CLIENT"] }] }, requestedOrgId: undefined };
});

const admin = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
let n = 0;
async function bcryptUser() {
  n += 1;
  const { userId } = await admin().createHumanUser({
    userName: `rules-${n}`,
    profile: { firstName: "Ru", lastName: `Les ${n}` },
    email: { email: `rules-${n}@example.com`, isEmailVerified: true },
    hashedPassword: { value: bcrypt.hashSync(OLD, 4) },
  });
  return userId;
}
const refusal = async (promise: Promise<unknown>) => typed((await promise.then(() => undefined, (e: unknown) => e)) as DomainError);

describe("a rehash races a password change", () => {
  it("SetPassword landing between the check and its commit wins: the check is judged again against the new hash (the old password is wrong now), and nothing is overwritten", async () => {
    const userId = await bcryptUser();
    const deps = interleavedDeps(t, () => admin().setPassword({ userId, password: NEW }));
    expect(await refusal(verifyPassword(deps, caller, { userId, password: OLD }))).toEqual({ kind: "invalid_argument", reason: "password.invalid", metadata: {} });
    const stored = (await storedPassword(t, userId)).hash!;
    expect(stored).toMatch(DEFAULT_ARGON2ID);
    await verifyPassword(t.server.gatehouse.deps, caller, { userId, password: NEW });
    expect((await storedPassword(t, userId)).hash).toBe(stored);
    const types = (await eventsOf(t, "user", userId)).map((e) => e.type);
    expect(types.filter((type) => type === "user.password.rehashed")).toEqual([]);
    expect(types.filter((type) => type.startsWith("user.password."))).toEqual(["user.password.set", "user.password.check_failed", "user.password.checked"]);
  });

  it("two sign-ins at once with the right password rehash once: the second finds the hash replaced and verifies the new one", async () => {
    const userId = await bcryptUser();
    const deps = racingDeps(t);
    const answers = await Promise.all([verifyPassword(deps, caller, { userId, password: OLD }), verifyPassword(deps, caller, { userId, password: OLD })]);
    expect(answers).toHaveLength(2);
    const events = await eventsOf(t, "user", userId);
    expect(events.filter((e) => e.type === "user.password.rehashed")).toHaveLength(1);
    expect(events.filter((e) => e.type === "user.password.checked")).toHaveLength(2);
    expect((await storedPassword(t, userId)).hash).toMatch(DEFAULT_ARGON2ID);
  });
});

describe("a right password races a hold", () => {
  it("a lock landing between the check and its commit turns the answer into user.locked, with no success recorded", async () => {
    const userId = await bcryptUser();
    const deps = interleavedDeps(t, () => admin().lockUser({ userId }));
    expect(await refusal(verifyPassword(deps, caller, { userId, password: OLD }))).toEqual({ kind: "failed_precondition", reason: "user.locked", metadata: {} });
    const events = await eventsOf(t, "user", userId);
    expect(events.filter((e) => e.type === "user.password.checked" || e.type === "user.password.rehashed")).toEqual([]);
    expect((await storedPassword(t, userId)).hash).toMatch(/^\$2b\$/);
  });

  it("a deactivation landing between a wrong password and its count: the wrong password still counts (it was wrong); the next attempt is user.inactive", async () => {
    const userId = await bcryptUser();
    const deps = interleavedDeps(t, () => admin().deactivateUser({ userId }));
    expect(await refusal(verifyPassword(deps, caller, { userId, password: "Wrong-1" }))).toMatchObject({ reason: "password.invalid" });
    expect((await storedPassword(t, userId)).failedAttempts).toBe(1);
    expect(await refusal(verifyPassword(t.server.gatehouse.deps, caller, { userId, password: OLD }))).toMatchObject({ reason: "user.inactive" });
  });
});

describe("a count that keeps changing", () => {
  it("is retried a bounded number of times, then aborted password.check_contended (typed, never internal)", async () => {
    const userId = await bcryptUser();
    const real = t.server.gatehouse.deps;
    // Every commit of this check loses to a wrong password recorded just before it (another front end's).
    let losses = 0;
    const store = new Proxy(real.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property !== "commit") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (commit: Parameters<Deps["store"]["commit"]>[0]) => {
          const count = (await target.findUserById(userId))!.failedPasswordAttempts;
          await target.commit({ ...commit, writes: [{ kind: "user.passwordFailed", id: userId, attempts: count, lock: false }], events: [] });
          losses += 1;
          return target.commit(commit);
        };
      },
    }) as Deps["store"];
    await real.store.commit({ instanceId: caller.principal.instanceId, actor: "test", at: new Date(), writes: [{ kind: "lockoutPolicy.put", row: { instanceId: caller.principal.instanceId, maxPasswordAttempts: 0 } }], events: [] });
    try {
      expect(await refusal(verifyPassword({ ...real, store }, caller, { userId, password: "Wrong-1" }))).toEqual({ kind: "aborted", reason: "password.check_contended", metadata: {} });
      expect(losses).toBe(25);
      expect((await admin().getUser({ userId })).user?.state).toBe(UserState.ACTIVE);
    } finally {
      await real.store.commit({ instanceId: caller.principal.instanceId, actor: "test", at: new Date(), writes: [{ kind: "lockoutPolicy.put", row: { instanceId: caller.principal.instanceId, maxPasswordAttempts: 10 } }], events: [] });
    }
  });
});

describe("the permission comes first", () => {
  it("a caller without user.password.check is refused before any look-up (the store is never read)", async () => {
    const owner = await adminCaller(t);
    const stranger: Caller = { ...ownerCaller(owner.principal.userId, orgId, owner.principal.instanceId), principal: { ...owner.principal, memberships: [] } };
    const store = new Proxy(t.server.gatehouse.deps.store, {
      get() {
        throw new Error("the store was touched before the permission check");
      },
    });
    expect(await refusal(verifyPassword({ ...t.server.gatehouse.deps, store }, stranger, { loginName: "anyone", password: OLD }))).toMatchObject({
      kind: "permission_denied",
      metadata: { permission: "user.password.check" },
    });
  });
});
