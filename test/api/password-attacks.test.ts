import { Code } from "@connectrpc/connect";
import bcrypt from "bcryptjs";
import { availableParallelism } from "node:os";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { verifyPassword } from "../../src/commands/verify-password.js";
import type { Caller } from "../../src/context.js";
import type { DomainError } from "../../src/domain/errors.js";
import { adminCaller, interleavedDeps, typed } from "../commands/rules-support.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { errorShape, failure } from "../support/errors.js";
import { eventually } from "../support/eventually.js";
import { createLoginClient, DEFAULT_ARGON2ID, eventsOf, storedPassword, usersAs } from "../support/login-client.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * An attacker's look at VerifyPassword, SetPassword, the lockout and IAM_LOGIN_CLIENT (issue 15 items 2-3; user.proto,
 * instance.proto, README "Signing in"): as a login client, a user manager, the owner of another organization and an
 * anonymous caller. Each test is a rule that must hold whatever the caller tries.
 */
const t = useTestServer();
let orgId: string;
let otherOrgId: string;
let loginClient: Actor;
const GOOD = "Attack-Surface-2026!";
const WRONG = "Guessed-Wrong-0!";

const orgs = () => t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
const instance = (token = t.server.adminToken) => t.clients.client(InstanceService, "connect-json-http1", { token });
const admin = (org = orgId) => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: org });
const login = (protocol: Protocol = "connect-json-http1", org?: string) => usersAs(t, loginClient, protocol, org);
const byId = (userId: string, password: string) => ({ user: { case: "userId" as const, value: userId }, password });
const byName = (loginName: string, password: string) => ({ user: { case: "loginName" as const, value: loginName }, password });

beforeAll(async () => {
  ({ organizationId: orgId } = await orgs().createOrganization({ name: "Attacked" }));
  ({ organizationId: otherOrgId } = await orgs().createOrganization({ name: "Attacker's own" }));
  loginClient = await createLoginClient(t, orgId, "attack-login-client");
});

let n = 0;
/** An ACTIVE human user of `org` with a password (or an imported hash, or none), optionally with organization roles. */
async function human(options: { password?: string; hashedPassword?: string; org?: string; orgRoles?: string[] } = {}) {
  n += 1;
  const userName = `target-${n}`;
  const org = options.org ?? orgId;
  const { userId } = await admin(org).createHumanUser({
    userName,
    profile: { firstName: "Tar", lastName: `Get ${n}` },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
    ...(options.hashedPassword ? { hashedPassword: { value: options.hashedPassword } } : { password: options.password ?? GOOD }),
  });
  if (options.orgRoles) await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId: org }).addOrganizationMember({ userId, roles: options.orgRoles });
  return { userId, userName };
}
const actor = (roles: string[], org = orgId) => createActor(t.clients, t.server.adminToken, org, `attacker-${++n}`, roles);
const stateOf = async (userId: string) => (await admin().getUser({ userId })).user?.state;

describe("privilege: who may set whose password", () => {
  it("a user manager or an organization owner cannot set the password of an IAM_OWNER, nor of a login client; the hash stays", async () => {
    const iamOwner = await human();
    await instance().addInstanceMember({ userId: iamOwner.userId, roles: ["IAM_OWNER"] });
    const humanLoginClient = await human();
    await instance().addInstanceMember({ userId: humanLoginClient.userId, roles: ["IAM_LOGIN_CLIENT"] });
    for (const roles of [["ORG_USER_MANAGER"], ["ORG_OWNER"]]) {
      const attacker = await actor(roles);
      for (const target of [iamOwner, humanLoginClient]) {
        const before = (await storedPassword(t, target.userId)).hash;
        expect(await failure(usersAs(t, attacker, "connect-json-http1", orgId).setPassword({ userId: target.userId, password: "Taken-Over-1!" }))).toMatchObject({
          code: Code.PermissionDenied,
          reason: "principal.privileged",
        });
        expect((await storedPassword(t, target.userId)).hash).toBe(before);
      }
    }
  });

  it("a user manager cannot set an organization owner's password; an owner may set a user manager's (the ceiling, not a blanket refusal)", async () => {
    const owner = await human({ orgRoles: ["ORG_OWNER"] });
    const manager = await human({ orgRoles: ["ORG_USER_MANAGER"] });
    const asManager = usersAs(t, await actor(["ORG_USER_MANAGER"]), "connect-json-http1", orgId);
    expect(await failure(asManager.setPassword({ userId: owner.userId, password: "Taken-Over-1!" }))).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
    await usersAs(t, await actor(["ORG_OWNER"]), "connect-json-http1", orgId).setPassword({ userId: manager.userId, password: "Reset-By-Owner-1!" });
    await login().verifyPassword(byId(manager.userId, "Reset-By-Owner-1!"));
  });

  it("the owner of another organization cannot set the password of a user here: permission_denied with the header, not_found without", async () => {
    const victim = await human();
    const stranger = await actor(["ORG_OWNER"], otherOrgId);
    expect(await failure(usersAs(t, stranger, "connect-json-http1", orgId).setPassword({ userId: victim.userId, password: "Taken-Over-1!" }))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "organization.access_denied",
    });
    expect(await failure(usersAs(t, stranger).setPassword({ userId: victim.userId, password: "Taken-Over-1!" }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
    await login().verifyPassword(byId(victim.userId, GOOD));
  });

  it("only an IAM_OWNER grants IAM_LOGIN_CLIENT: not an organization owner, not the instance viewer, not a login client itself, and not as an organization role", async () => {
    const candidate = await actor([]);
    const viewer = await actor([]);
    await instance().addInstanceMember({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });
    for (const caller of [await actor(["ORG_OWNER"]), viewer, loginClient]) {
      expect(await failure(instance(caller.token).addInstanceMember({ userId: candidate.userId, roles: ["IAM_LOGIN_CLIENT"] }))).toMatchObject({ code: Code.PermissionDenied });
    }
    // The login client cannot raise itself either.
    expect(await failure(instance(loginClient.token).addInstanceMember({ userId: loginClient.userId, roles: ["IAM_OWNER"] }))).toMatchObject({ code: Code.PermissionDenied });
    const orgsAsAdmin = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
    expect(await failure(orgsAsAdmin.addOrganizationMember({ userId: candidate.userId, roles: ["IAM_LOGIN_CLIENT"] }))).toMatchObject({ code: Code.InvalidArgument, reason: "member.role_invalid" });
    expect(await failure(usersAs(t, candidate).verifyPassword(byId(candidate.userId, GOOD)))).toMatchObject({ code: Code.PermissionDenied });
  });

  it("a token an organization owner minted for a machine user before it became a login client stops working, and the owner cannot mint another", async () => {
    const owner = await actor(["ORG_OWNER"]);
    const ownerUsers = usersAs(t, owner, "connect-json-http1", orgId);
    const { userId: frontEnd } = await ownerUsers.createMachineUser({ userName: `front-end-${++n}`, name: "Front end" });
    const { token: planted } = await ownerUsers.addPersonalAccessToken({ userId: frontEnd });
    await instance().addInstanceMember({ userId: frontEnd, roles: ["IAM_LOGIN_CLIENT"] });
    const victim = await human();
    expect(await failure(usersAs(t, { token: planted }).verifyPassword(byId(victim.userId, GOOD)))).toMatchObject({ code: Code.Unauthenticated });
    expect(await failure(ownerUsers.addPersonalAccessToken({ userId: frontEnd }))).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
  });

  it("a login client does nothing but check passwords: no reads, no lists, no events, no grants, no tokens for others, no state changes", async () => {
    const victim = await human();
    const users = login("connect-json-http1", orgId);
    const asClient = { token: loginClient.token, orgId };
    const calls: [string, () => Promise<unknown>][] = [
      ["GetUser", () => users.getUser({ userId: victim.userId })],
      ["ListUsers", () => users.listUsers({})],
      ["ListPersonalAccessTokens of another", () => users.listPersonalAccessTokens({ userId: victim.userId })],
      ["AddPersonalAccessToken for another", () => users.addPersonalAccessToken({ userId: victim.userId })],
      ["UnlockUser", () => users.unlockUser({ userId: victim.userId })],
      ["LockUser", () => users.lockUser({ userId: victim.userId })],
      ["SetPassword", () => users.setPassword({ userId: victim.userId, password: "Taken-Over-1!" })],
      ["CreateHumanUser", () => users.createHumanUser({ userName: `planted-${++n}`, profile: { firstName: "P", lastName: "L" }, email: { email: `planted-${n}@example.com` } })],
      ["ListEvents", () => t.clients.client(EventService, "connect-json-http1", asClient).listEvents({ pageSize: 10 })],
      ["GetOrganization", () => t.clients.client(OrganizationService, "connect-json-http1", asClient).getOrganization({ organizationId: orgId })],
      ["ListOrganizations", () => t.clients.client(OrganizationService, "connect-json-http1", asClient).listOrganizations({})],
      ["GetInstance", () => instance(loginClient.token).getInstance({})],
      ["ListInstanceMembers", () => instance(loginClient.token).listInstanceMembers({})],
      ["GetLockoutPolicy", () => instance(loginClient.token).getLockoutPolicy({})],
      ["SetLockoutPolicy", () => instance(loginClient.token).setLockoutPolicy({ maxPasswordAttempts: 0 })],
    ];
    for (const [label, call] of calls) expect({ label, code: (await failure(call())).code }).toEqual({ label, code: Code.PermissionDenied });
    expect(await stateOf(victim.userId)).toBe(UserState.ACTIVE);
  });

  it("a login client's token stops at once when the login client is locked or deactivated", async () => {
    const client = await createLoginClient(t, orgId, `held-login-client-${++n}`);
    const victim = await human();
    await usersAs(t, client).verifyPassword(byId(victim.userId, GOOD));
    await admin().lockUser({ userId: client.userId });
    expect(await failure(usersAs(t, client).verifyPassword(byId(victim.userId, GOOD)))).toMatchObject({ code: Code.Unauthenticated, reason: "user.locked" });
    await admin().unlockUser({ userId: client.userId });
    await usersAs(t, client).verifyPassword(byId(victim.userId, GOOD));
    await admin().deactivateUser({ userId: client.userId });
    expect(await failure(usersAs(t, client).verifyPassword(byId(victim.userId, GOOD)))).toMatchObject({ code: Code.Unauthenticated, reason: "user.inactive" });
  });

  it("x-service-orgid of another organization: even the right password of a user elsewhere is the unknown user's answer, by id and by name", async () => {
    const victim = await human();
    for (const request of [byId(victim.userId, GOOD), byName(victim.userName, GOOD)]) {
      const { code, reason, message, metadata } = await failure(login("connect-json-http1", otherOrgId).verifyPassword(request));
      const unknown = await failure(login("connect-json-http1", otherOrgId).verifyPassword(byName(`nobody-${++n}`, GOOD)));
      expect({ code, reason, message, metadata }).toEqual({ code: unknown.code, reason: unknown.reason, message: unknown.message, metadata: unknown.metadata });
      expect(reason).toBe("password.invalid");
    }
    // Not counted against the user: the attempt named nobody there.
    expect((await storedPassword(t, victim.userId)).failedAttempts).toBe(0);
  });

  it("an anonymous caller or a bad token is refused before anything is looked up or recorded", async () => {
    const victim = await human();
    const { instanceId } = await instance().getInstance({});
    const signInsBefore = (await eventsOf(t, "sign_in", instanceId)).length;
    for (const token of ["", "not-a-token", `${loginClient.token}x`]) {
      expect(await failure(usersAs(t, { token }).verifyPassword(byId(victim.userId, WRONG)))).toMatchObject({ code: Code.Unauthenticated });
      expect(await failure(usersAs(t, { token }).verifyPassword(byName(`nobody-${++n}`, WRONG)))).toMatchObject({ code: Code.Unauthenticated });
    }
    expect((await eventsOf(t, "user", victim.userId)).filter((e) => e.type.startsWith("user.password.check"))).toEqual([]);
    expect((await eventsOf(t, "sign_in", instanceId)).length).toBe(signInsBefore);
    expect((await storedPassword(t, victim.userId)).failedAttempts).toBe(0);
  });
});

describe("enumeration: the answers tell nothing about who exists", () => {
  it("over REST, a wrong password, an unknown user, a user without a password and a machine user get the same status, headers and body (but the request id)", async () => {
    const known = await human();
    n += 1;
    const { userId: initial } = await admin().createHumanUser({ userName: `rest-initial-${n}`, profile: { firstName: "I", lastName: "N" }, email: { email: `rest-initial-${n}@example.com` } });
    const { userId: machine } = await admin().createMachineUser({ userName: `rest-machine-${n}`, name: "M" });
    const ask = async (body: unknown) => {
      const response = await fetch(`${t.server.url}/v1/users/password/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${loginClient.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const headers: [string, string][] = [];
      response.headers.forEach((value, name) => ["date", "x-request-id", "content-length"].includes(name) || headers.push([name, value]));
      const text = (await response.text()).replaceAll(response.headers.get("x-request-id") ?? "\u0000", "<request id>");
      return { status: response.status, headers, text };
    };
    const answers = [
      await ask({ loginName: known.userName, password: WRONG }),
      await ask({ loginName: known.userName.toUpperCase(), password: WRONG }),
      await ask({ loginName: `${known.userName}-nobody`, password: WRONG }),
      await ask({ userId: `${known.userId}0`, password: WRONG }),
      await ask({ userId: initial, password: WRONG }),
      await ask({ userId: machine, password: WRONG }),
    ];
    expect(answers[0]!.status).toBe(400);
    expect(answers[0]!.text).toContain("password.invalid");
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  });

  it("the login name is the user's whatever its case, surrounding blanks and Unicode compatibility form; other names are unknown", async () => {
    const user = await human();
    for (const variant of [user.userName.toUpperCase(), `  ${user.userName}\t`, user.userName.replace("t", "\uff54")]) {
      await login().verifyPassword(byName(variant, GOOD));
    }
    for (const stranger of [`${user.userName}x`, user.userName.replace("-", "_")]) {
      expect(await failure(login().verifyPassword(byName(stranger, GOOD)))).toMatchObject({ code: Code.InvalidArgument, reason: "password.invalid" });
    }
  });
});

describe("lockout: no way around the count", () => {
  it("wrong passwords by user id, by login name and by its case variants, at once, are one count: exactly 10 judged, the user locked", async () => {
    const { userId, userName } = await human();
    const names = [userId, userName, userName.toUpperCase(), ` ${userName} `];
    const attempts = Array.from({ length: 24 }, (_, i) => {
      const request = i % 4 === 0 ? byId(userId, `${WRONG}${i}`) : byName(names[i % 4]!, `${WRONG}${i}`);
      return failure(login(PROTOCOLS[i % PROTOCOLS.length]!).verifyPassword(request));
    });
    const reasons = (await Promise.all(attempts)).map((f) => f.reason);
    expect(reasons.filter((r) => r === "password.invalid")).toHaveLength(10);
    expect(reasons.filter((r) => r === "user.locked")).toHaveLength(14);
    expect(await stateOf(userId)).toBe(UserState.LOCKED);
    expect((await storedPassword(t, userId)).failedAttempts).toBe(10);
  });

  it("after the lock the right password is refused and changes nothing: no rehash of an imported hash, no reset of the count", async () => {
    const hash = bcrypt.hashSync(GOOD, 4);
    const { userId } = await human({ hashedPassword: hash });
    for (let i = 0; i < 10; i++) await failure(login().verifyPassword(byId(userId, WRONG)));
    expect(await failure(login().verifyPassword(byId(userId, GOOD)))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.locked" });
    expect(await storedPassword(t, userId)).toEqual({ hash, failedAttempts: 10 });
    expect((await eventsOf(t, "user", userId)).filter((e) => e.type === "user.password.checked" || e.type === "user.password.rehashed")).toEqual([]);
  });

  it("a right password while the user is deactivated does not reset the count: reactivated, the next wrong passwords lock at the limit", async () => {
    const { userId } = await human();
    for (let i = 0; i < 9; i++) await failure(login().verifyPassword(byId(userId, WRONG)));
    await admin().deactivateUser({ userId });
    expect(await failure(login().verifyPassword(byId(userId, GOOD)))).toMatchObject({ reason: "user.inactive" });
    await admin().reactivateUser({ userId });
    expect((await storedPassword(t, userId)).failedAttempts).toBe(9);
    await failure(login().verifyPassword(byId(userId, WRONG)));
    expect(await stateOf(userId)).toBe(UserState.LOCKED);
  });

  it("machine users and users without a password cannot be locked by guessing: nothing to guess, nothing counted", async () => {
    const { userId: machine } = await admin().createMachineUser({ userName: `unlockable-bot-${++n}`, name: "Bot" });
    const { userId: initial } = await admin().createHumanUser({ userName: `unlockable-${n}`, profile: { firstName: "U", lastName: "L" }, email: { email: `unlockable-${n}@example.com` } });
    for (const userId of [machine, initial]) {
      for (let i = 0; i < 12; i++) expect(await failure(login().verifyPassword(byId(userId, `${WRONG}${i}`)))).toMatchObject({ reason: "password.invalid" });
      expect((await storedPassword(t, userId)).failedAttempts).toBe(0);
      expect((await admin().getUser({ userId })).user?.state).not.toBe(UserState.LOCKED);
    }
  });

  it("only IAM_OWNER sets the lockout policy (an organization owner or the instance viewer cannot turn it off); 1000 is the most", async () => {
    const viewer = await actor([]);
    await instance().addInstanceMember({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });
    for (const caller of [await actor(["ORG_OWNER"]), await actor(["ORG_USER_MANAGER"]), viewer]) {
      expect(await failure(instance(caller.token).setLockoutPolicy({ maxPasswordAttempts: 0 }))).toMatchObject({ code: Code.PermissionDenied });
    }
    expect((await instance(viewer.token).getLockoutPolicy({})).maxPasswordAttempts).toBe(10);
    expect(await failure(instance().setLockoutPolicy({ maxPasswordAttempts: 4_294_967_295 }))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["max_password_attempts"] });
    const { details } = await instance().setLockoutPolicy({ maxPasswordAttempts: 1000 });
    try {
      const { userId } = await human();
      for (let i = 0; i < 11; i++) await failure(login().verifyPassword(byId(userId, WRONG)));
      expect(await stateOf(userId)).toBe(UserState.ACTIVE);
    } finally {
      await instance().setLockoutPolicy({ maxPasswordAttempts: 10, expectedSequence: details!.sequence });
    }
  });
});

describe("a password reset races a check of the old password", () => {
  let caller: Caller;
  beforeAll(async () => {
    const owner = await adminCaller(t);
    caller = { principal: { ...owner.principal, userId: loginClient.userId, memberships: [{ level: "instance", scopeId: owner.principal.instanceId, ownerOrgId: owner.principal.instanceId, roles: ["IAM_LOGIN_CLIENT"] }] }, requestedOrgId: undefined };
  });
  const refusal = async (promise: Promise<unknown>) => typed((await promise.then(() => undefined, (e: unknown) => e)) as DomainError);

  it("an administrator's reset landing between the check of the old password and its commit wins: the old password is not answered right after the reset", async () => {
    // The reset is what an administrator does when a password leaked; a sign-in with the leaked one must not succeed after it.
    const { userId } = await human();
    const deps = interleavedDeps(t, () => admin().setPassword({ userId, password: "Fresh-After-Leak-1!" }));
    expect(await refusal(verifyPassword(deps, caller, { userId, password: GOOD }))).toEqual({ kind: "invalid_argument", reason: "password.invalid", metadata: {} });
    const types = (await eventsOf(t, "user", userId)).map((e) => e.type).filter((type) => type.startsWith("user.password."));
    expect(types).toEqual(["user.password.set", "user.password.check_failed"]);
    await login().verifyPassword(byId(userId, "Fresh-After-Leak-1!"));
  });

  it("a wrong password judged against the old hash is not counted against the new one: judged again, and the new password is right", async () => {
    const { userId } = await human();
    const deps = interleavedDeps(t, () => admin().setPassword({ userId, password: "Typed-Too-Early-1!" }));
    // The user types the new password a moment before the reset lands: judged against the hash now stored, it is right.
    await verifyPassword(deps, caller, { userId, password: "Typed-Too-Early-1!" });
    expect((await storedPassword(t, userId)).failedAttempts).toBe(0);
  });

  it("a user removed between the check and its commit is the unknown user's answer, never internal", async () => {
    const { userId } = await human({ hashedPassword: bcrypt.hashSync(GOOD, 4) });
    const deps = interleavedDeps(t, () => admin().removeUser({ userId }));
    expect(await refusal(verifyPassword(deps, caller, { userId, password: GOOD }))).toEqual({ kind: "invalid_argument", reason: "password.invalid", metadata: {} });
  });
});

describe("rehash: what the new hash accepts", () => {
  it("bcrypt's 72-byte truncation ends with the rehash: the full password keeps working, a variant that only shares its first 72 bytes no longer does", async () => {
    const full = `${"Long-Passphrase-".repeat(5)}Tail-2026!`;
    expect(Buffer.byteLength(full)).toBeGreaterThan(72);
    const sameFirst72 = `${full.slice(0, 72)}SOMETHING-ELSE`;
    const hash = bcrypt.hashSync(full, 4);
    const { userId } = await human({ hashedPassword: hash });
    // The imported bcrypt answers as the old system did: both are right against it.
    expect(bcrypt.compareSync(sameFirst72, hash)).toBe(true);
    await login().verifyPassword(byId(userId, full));
    expect((await storedPassword(t, userId)).hash).toMatch(DEFAULT_ARGON2ID);
    await login().verifyPassword(byId(userId, full));
    expect(await failure(login().verifyPassword(byId(userId, sameFirst72)))).toMatchObject({ code: Code.InvalidArgument, reason: "password.invalid" });
    expect(await failure(login().verifyPassword(byId(userId, full.slice(0, 72))))).toMatchObject({ reason: "password.invalid" });
  });

  it("a password is compared as sent: no Unicode normalisation (an NFD spelling of an NFC password is another password), and U+0000 is refused before any work", async () => {
    const nfc = "Caf\u00e9-Cr\u00e8me-2026!";
    const { userId } = await admin().createHumanUser({ userName: `unicode-${++n}`, profile: { firstName: "U", lastName: "N" }, email: { email: `unicode-${n}@example.com`, isEmailVerified: true }, password: nfc });
    await login().verifyPassword(byId(userId, nfc));
    expect(await failure(login().verifyPassword(byId(userId, nfc.normalize("NFD"))))).toMatchObject({ reason: "password.invalid" });
    expect(await failure(login().verifyPassword(byId(userId, `${nfc}\u0000`)))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["password"] });
    expect(await failure(admin().setPassword({ userId, password: `${nfc}\u0000x` }))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["password"] });
    expect((await storedPassword(t, userId)).failedAttempts).toBe(1);
  });
});

describe("bounds and secrets", () => {
  it("a password over 1024 characters is refused before any work (no event, no count), and appears in no answer or log line", async () => {
    const { userId } = await human();
    const marker = `Overlong-${"x".repeat(1020)}-Marker-7`;
    const refused = await failure(login().verifyPassword(byId(userId, marker)));
    expect(refused).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["password"] });
    expect(refused.message).not.toContain("Marker-7");
    expect(await failure(admin().setPassword({ userId, password: marker }))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["password"] });
    expect((await eventsOf(t, "user", userId)).filter((e) => e.type.startsWith("user.password."))).toEqual([]);
    expect(t.server.logs.text).not.toContain("Marker-7");
    // At the limit, 1024 characters of 4 bytes each, it is an ordinary password.
    const widest = "\u{1F511}".repeat(1021) + "Aa1";
    await admin().setPassword({ userId, password: widest });
    await login().verifyPassword(byId(userId, widest));
  });

  it("a flood of checks is answered resource_exhausted password_verify.busy once the verifier queue is full, never internal", async () => {
    // Two slow imported hashes keep the verifier threads busy for seconds while the flood arrives, so it queues up
    // behind them. Any well-formed bcrypt of cost 14 costs the same to check, whatever it was made from.
    const slow = `$2b$14$${"a".repeat(22)}${"b".repeat(31)}`;
    const blockers = await Promise.all([human({ hashedPassword: slow }), human({ hashedPassword: slow })]);
    const blocked = blockers.map((b) => failure(login().verifyPassword(byId(b.userId, WRONG))));
    // The flood is called off once it was refused: its waiting checks are dropped with the calls, so none is left to run.
    const callOff = new AbortController();
    const answers: string[] = [];
    const flood = Array.from({ length: 300 }, (_, i) =>
      login("connect-proto-h2c")
        .verifyPassword(byName(`flood-${i}-${++n}`, WRONG), { signal: callOff.signal })
        .then(
          () => answers.push("ok"),
          (error: unknown) => callOff.signal.aborted || answers.push(`${errorShape(error).code}/${errorShape(error).reason}`),
        ),
    );
    const busy = `${Code.ResourceExhausted}/password_verify.busy`;
    await eventually(() => answers.includes(busy), { what: "a check of the flood refused as busy", timeoutMs: 30_000 });
    callOff.abort();
    await Promise.all([...flood, ...blocked]);
    expect(new Set(answers)).toEqual(new Set([busy, ...(answers.some((a) => a !== busy) ? [`${Code.InvalidArgument}/password.invalid`] : [])]));
  }, 60_000);
});

describe("costly imported hashes", () => {
  it("hold no sign-in of a user with a default hash: with every verifier but one busy on them, that check answers first", async () => {
    // A user manager may import hashes at the highest accepted cost (seconds each), and anyone at a login page can make
    // them be checked. The verifier (as many workers as the cores, at least 2, at most 8) keeps one worker free of
    // costly hashes. Well-formed bcrypt of cost 13 costs about half a second to check, whatever it was made from.
    const costly = `$2b$13$${"a".repeat(22)}${"b".repeat(31)}`;
    const workers = Math.max(2, Math.min(availableParallelism(), 8));
    const costlyUsers = await Promise.all(Array.from({ length: workers }, () => human({ hashedPassword: costly, org: otherOrgId })));
    const other = await human();
    const order: string[] = [];
    const settle = (label: string, call: Promise<unknown>) => call.then(
      () => order.push(label),
      () => order.push(label),
    );
    await Promise.all([
      ...costlyUsers.map((u) => settle("costly", login().verifyPassword(byId(u.userId, WRONG)))),
      settle("other", login().verifyPassword(byId(other.userId, GOOD))),
    ]);
    expect(order[0]).toBe("other");
  }, 60_000);

  it("crowd out no other organization's: one organization's flood of costly checks is refused busy past its share, another's right password still passes", async () => {
    // Past the costly checks that run (all workers but one) and the places one organization may hold (a quarter of a
    // quarter of 256), a flood is refused busy whatever the machine's cores.
    const workers = Math.max(2, Math.min(availableParallelism(), 8));
    const flood = workers - 1 + 16 + 4;
    const costly = `$2b$11$${"a".repeat(22)}${"b".repeat(31)}`;
    const flooded = await Promise.all(Array.from({ length: flood }, () => human({ hashedPassword: costly, org: otherOrgId })));
    const other = await human({ hashedPassword: bcrypt.hashSync(GOOD, 10) });
    const answers = flooded.map((u) => failure(login().verifyPassword(byId(u.userId, WRONG))));
    const checked = await login().verifyPassword(byId(other.userId, GOOD));
    expect(checked.details).toBeDefined();
    const reasons = (await Promise.all(answers)).map((a) => a.reason);
    expect(reasons).toContain("password_verify.busy");
  }, 60_000);
});
