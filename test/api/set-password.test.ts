import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { initializeUserWithCode } from "../../src/commands/initialize-user.js";
import { pendingCode } from "../../src/queries/pending-code.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { createLoginClient, DEFAULT_ARGON2ID, eventsOf, storedPassword, usersAs } from "../support/login-client.js";
import { lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * UserService.SetPassword (issue 15, item 3; user.proto): an administrator's reset under `user.write`, the privilege
 * ceiling and the password policy, stored as argon2id, one event, optimistic concurrency like the other Set… RPCs.
 */
const t = useTestServer();
let orgId: string;
let loginClient: Actor;
let userManager: Actor;
let orgOwner: Actor;
const GOOD = "Reset-By-Admin-7";

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Set password" }));
  loginClient = await createLoginClient(t, orgId, "set-password-login-client");
  userManager = await createActor(t.clients, t.server.adminToken, orgId, "set-password-user-manager", ["ORG_USER_MANAGER"]);
  orgOwner = await createActor(t.clients, t.server.adminToken, orgId, "set-password-org-owner", ["ORG_OWNER"]);
});

const admin = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
const signIn = (userId: string, password: string) => usersAs(t, loginClient).verifyPassword({ user: { case: "userId", value: userId }, password });

let n = 0;
async function newUser(options: { verified?: boolean; password?: string; orgRoles?: string[] } = {}) {
  n += 1;
  const email = `reset-${n}@example.com`;
  const { userId } = await admin().createHumanUser({
    userName: `reset-${n}`,
    profile: { firstName: "Re", lastName: `Set ${n}` },
    email: { email, isEmailVerified: options.verified ?? true },
    ...(options.password ? { password: options.password } : {}),
  });
  if (options.orgRoles) await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId }).addOrganizationMember({ userId, roles: options.orgRoles });
  return { userId, email };
}

describe("SetPassword", () => {
  it.each(PROTOCOLS)("over %s sets an argon2id the user signs in with, one event, no secret in it", async (protocol) => {
    const { userId } = await newUser({ password: "First-Password-1" });
    const { details } = await usersAs(t, userManager, protocol, orgId).setPassword({ userId, password: GOOD });
    expect((await storedPassword(t, userId)).hash).toMatch(DEFAULT_ARGON2ID);
    await signIn(userId, GOOD);
    expect(await failure(signIn(userId, "First-Password-1"))).toMatchObject({ reason: "password.invalid" });
    const sets = (await eventsOf(t, "user", userId)).filter((e) => e.type === "user.password.set");
    expect(sets).toEqual([{ type: "user.password.set", payload: { passwordChangeRequired: false, initCodeVoided: false }, actor: userManager.userId }]);
    const { user } = await admin().getUser({ userId });
    expect(details?.resourceOwner).toBe(orgId);
    expect(details?.sequence).toBeLessThan(user!.details!.sequence);
  });

  it("with change_required makes VerifyPassword answer password_change_required", async () => {
    const { userId } = await newUser();
    await admin().setPassword({ userId, password: GOOD, changeRequired: true });
    expect((await signIn(userId, GOOD)).passwordChangeRequired).toBe(true);
    await admin().setPassword({ userId, password: GOOD, changeRequired: false });
    expect((await signIn(userId, GOOD)).passwordChangeRequired).toBe(false);
  });

  it("checks the password policy, naming every broken rule, and writes nothing", async () => {
    const { userId } = await newUser({ password: "First-Password-1" });
    const before = await storedPassword(t, userId);
    const error = await failure(admin().setPassword({ userId, password: "alllowercase" }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "password.policy", fields: ["password", "password", "password"] });
    expect(error.rules).toEqual(["password.policy.uppercase", "password.policy.digit", "password.policy.symbol"]);
    expect(await storedPassword(t, userId)).toEqual(before);
  });

  it("respects the privilege ceiling: a user manager may not set an organization owner's password; the owner and IAM_OWNER may", async () => {
    const { userId: owner } = await newUser({ orgRoles: ["ORG_OWNER"] });
    expect(await failure(usersAs(t, userManager, "grpc-h2c", orgId).setPassword({ userId: owner, password: GOOD }))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "principal.privileged",
    });
    expect((await storedPassword(t, owner)).hash).toBeNull();
    await usersAs(t, orgOwner, "connect-json-http1", orgId).setPassword({ userId: owner, password: GOOD });
    // The login client holds user.password.check instance-wide: only IAM_OWNER covers it.
    expect(await failure(usersAs(t, orgOwner, "connect-json-http1", orgId).setPassword({ userId: loginClient.userId, password: GOOD }))).toMatchObject({
      code: Code.PermissionDenied,
    });
  });

  it("resets the count of wrong passwords but keeps a lock", async () => {
    const { userId } = await newUser({ password: "First-Password-1" });
    for (let i = 0; i < 3; i++) await failure(signIn(userId, "Wrong-Password-1"));
    expect((await storedPassword(t, userId)).failedAttempts).toBe(3);
    await admin().setPassword({ userId, password: GOOD });
    expect((await storedPassword(t, userId)).failedAttempts).toBe(0);
    await admin().lockUser({ userId });
    await admin().setPassword({ userId, password: `${GOOD}!` });
    expect((await admin().getUser({ userId })).user?.state).toBe(UserState.LOCKED);
  });

  it("voids a pending init code and makes an INITIAL user with a verified email ACTIVE", async () => {
    const { userId } = await newUser();
    expect((await admin().getUser({ userId })).user?.state).toBe(UserState.INITIAL);
    expect((await pendingCode(t.server.gatehouse.deps, userId, "init")).state).toBe("usable");
    await admin().setPassword({ userId, password: GOOD });
    expect((await admin().getUser({ userId })).user?.state).toBe(UserState.ACTIVE);
    expect((await pendingCode(t.server.gatehouse.deps, userId, "init")).state).toBe("none");
    expect((await eventsOf(t, "user", userId)).filter((e) => e.type === "user.password.set").map((e) => e.payload.initCodeVoided)).toEqual([true]);
  });

  it("voids nothing once the init code was used (the user set its first password on the page)", async () => {
    const { userId, email } = await newUser({ verified: false });
    const code = /\/ui\/login\/user\/init\?\S*code=([A-Z0-9]+)/.exec((await lastMailTo(t.server, email))!.text)![1]!;
    await initializeUserWithCode(t.server.gatehouse.deps, { userId, code, password: "Page-Password-1" });
    await admin().setPassword({ userId, password: GOOD });
    expect((await eventsOf(t, "user", userId)).filter((e) => e.type === "user.password.set").map((e) => e.payload.initCodeVoided)).toEqual([false]);
  });

  it("leaves a user whose email is unverified INITIAL (the email is still to be verified)", async () => {
    const { userId, email } = await newUser({ verified: false });
    const code = /\/ui\/login\/user\/init\?\S*code=([A-Z0-9]+)/.exec((await lastMailTo(t.server, email))!.text)![1]!;
    await admin().setPassword({ userId, password: GOOD });
    expect((await admin().getUser({ userId })).user?.state).toBe(UserState.INITIAL);
    // The link of the initialization mail no longer sets a password.
    await expect(initializeUserWithCode(t.server.gatehouse.deps, { userId, code, password: "Page-Password-1" })).rejects.toMatchObject({ reason: "init_code.invalid" });
  });

  it("takes expected_sequence: a stale one is aborted concurrent_modification and writes nothing", async () => {
    const { userId } = await newUser({ password: "First-Password-1" });
    const read = (await admin().getUser({ userId })).user!.details!.sequence;
    await admin().setPassword({ userId, password: GOOD, expectedSequence: read });
    const before = await storedPassword(t, userId);
    expect(await failure(admin().setPassword({ userId, password: `${GOOD}?`, expectedSequence: read }))).toMatchObject({ code: Code.Aborted, reason: "concurrent_modification" });
    expect(await storedPassword(t, userId)).toEqual(before);
  });

  it("a machine user is user.not_human; an unknown user or one of another organization user.not_found", async () => {
    const { userId: machine } = await admin().createMachineUser({ userName: `reset-bot-${++n}`, name: "Bot" });
    expect(await failure(admin().setPassword({ userId: machine, password: GOOD }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_human" });
    expect(await failure(admin().setPassword({ userId: "no-such-user", password: GOOD }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
  });
});
