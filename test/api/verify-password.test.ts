import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { errorShape, failure } from "../support/errors.js";
import { createLoginClient, DEFAULT_ARGON2ID, eventsOf, importedHashes, storedPassword, usersAs } from "../support/login-client.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * UserService.VerifyPassword (issue 15, item 2; user.proto): imported hashes sign in and are replaced by argon2id
 * exactly once; a wrong password, an unknown user and a user without a password get one and the same answer; only
 * IAM_LOGIN_CLIENT and IAM_OWNER may ask; held users are told why; no password or hash reaches an event or a log line.
 */
const t = useTestServer();
let orgId: string;
let loginClient: Actor;
const GOOD = "Sign-In-Works-42";

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Sign-in" }));
  loginClient = await createLoginClient(t, orgId, "login-front-end");
});

const admin = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
const login = (protocol: Protocol = "connect-json-http1") => usersAs(t, loginClient, protocol);

let n = 0;
/** An ACTIVE human user of the test organization, with a password, an imported hash, or none. */
async function newUser(secret: { password?: string; hashedPassword?: string } = {}) {
  n += 1;
  const userName = `signer-${n}`;
  const { userId } = await admin().createHumanUser({
    userName,
    profile: { firstName: "Sig", lastName: `Ner ${n}` },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
    ...(secret.password ? { password: secret.password } : {}),
    ...(secret.hashedPassword ? { hashedPassword: { value: secret.hashedPassword } } : {}),
  });
  return { userId, userName };
}

describe("imported hashes sign in and are replaced by argon2id, once", () => {
  it.each(importedHashes.hashes.map((h, i) => [`${h.scheme} (${h.source}) #${i}`, h.hash, PROTOCOLS[i % PROTOCOLS.length]!] as const))(
    "%s",
    async (_label, hash, protocol) => {
      const { userId, userName } = await newUser({ hashedPassword: hash });
      expect((await storedPassword(t, userId)).hash).toBe(hash);

      const first = await login(protocol).verifyPassword({ user: { case: "loginName", value: userName.toUpperCase() }, password: importedHashes.password });
      expect(first.passwordChangeRequired).toBe(false);
      expect(first.details?.resourceOwner).toBe(orgId);
      const rehashed = (await storedPassword(t, userId)).hash!;
      expect(rehashed).toMatch(DEFAULT_ARGON2ID);

      // The second sign-in verifies the new hash and leaves it as it is.
      await login(protocol).verifyPassword({ user: { case: "userId", value: userId }, password: importedHashes.password });
      expect((await storedPassword(t, userId)).hash).toBe(rehashed);
      // A wrong password is still wrong against the new hash.
      expect(await failure(login(protocol).verifyPassword({ user: { case: "userId", value: userId }, password: `${importedHashes.password}!` }))).toMatchObject({
        code: Code.InvalidArgument,
        reason: "password.invalid",
      });

      const events = await eventsOf(t, "user", userId);
      const rehashes = events.filter((e) => e.type === "user.password.rehashed");
      expect(rehashes).toHaveLength(1);
      expect(rehashes[0]!.payload).toEqual({ fromScheme: expect.stringMatching(/^(md5-crypt|sha-crypt|bcrypt|argon2id|argon2i|scrypt|pbkdf2)$/), toScheme: "argon2id" });
      expect(rehashes[0]!.actor).toBe(loginClient.userId);
      expect(events.filter((e) => e.type === "user.password.checked")).toHaveLength(2);
      // The details of the first sign-in are its last event: the rehash, right after its check.
      const checkedAt = events.findIndex((e) => e.type === "user.password.checked");
      expect(events[checkedAt + 1]!.type).toBe("user.password.rehashed");
    },
  );

  it("a password set by Gatehouse (default argon2id) is kept as it is", async () => {
    const { userId, userName } = await newUser({ password: GOOD });
    const before = (await storedPassword(t, userId)).hash;
    expect(before).toMatch(DEFAULT_ARGON2ID);
    const answer = await login().verifyPassword({ user: { case: "loginName", value: `  ${userName}  ` }, password: GOOD });
    expect((await storedPassword(t, userId)).hash).toBe(before);
    expect((await eventsOf(t, "user", userId)).map((e) => e.type).filter((type) => type.startsWith("user.password"))).toEqual(["user.password.checked"]);
    const { user } = await admin().getUser({ userId });
    expect(answer.details?.sequence).toBe(user?.details?.sequence);
    expect(answer.details?.creationDate).toEqual(user?.details?.creationDate);
  });

  it("an imported argon2id as strong as the default is kept; a weaker version-16 one is replaced", async () => {
    const { hash: argon2 } = await import("@node-rs/argon2");
    // More memory and iterations than the default (another system's stronger setting): replacing it would weaken it.
    const strong = await argon2(GOOD, { algorithm: 2, memoryCost: 32_768, timeCost: 3, parallelism: 2 });
    const { userId } = await newUser({ hashedPassword: strong });
    await login().verifyPassword({ user: { case: "userId", value: userId }, password: GOOD });
    expect((await storedPassword(t, userId)).hash).toBe(strong);
    // version 16 (0x10), otherwise the default parameters: older and weaker.
    const v16 = await argon2(GOOD, { algorithm: 2, version: 0, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
    expect(v16).toMatch(/^\$argon2id\$v=16\$/);
    const { userId: old } = await newUser({ hashedPassword: v16 });
    await login().verifyPassword({ user: { case: "userId", value: old }, password: GOOD });
    expect((await storedPassword(t, old)).hash).toMatch(DEFAULT_ARGON2ID);
  });

  it("answers password_change_required as CreateHumanUser set it", async () => {
    n += 1;
    const { userId } = await admin().createHumanUser({
      userName: `must-change-${n}`,
      profile: { firstName: "Must", lastName: "Change" },
      email: { email: `must-change-${n}@example.com`, isEmailVerified: true },
      password: GOOD,
      passwordChangeRequired: true,
    });
    expect((await login().verifyPassword({ user: { case: "userId", value: userId }, password: GOOD })).passwordChangeRequired).toBe(true);
  });
});

describe("a wrong password, an unknown user and a user without a password get the same answer", () => {
  it.each(PROTOCOLS)("over %s: same code, reason, message and metadata; each attempt recorded", async (protocol) => {
    const { userId, userName } = await newUser({ password: GOOD });
    n += 1;
    const { userId: initial } = await admin().createHumanUser({ userName: `no-password-${n}`, profile: { firstName: "No", lastName: "Password" }, email: { email: `no-password-${n}@example.com` } });
    const { userId: machine } = await admin().createMachineUser({ userName: `no-password-bot-${n}`, name: "Bot" });
    const attempts = {
      "wrong password (by id)": { user: { case: "userId" as const, value: userId }, password: "Wrong-Password-1" },
      "wrong password (by name)": { user: { case: "loginName" as const, value: userName }, password: "Wrong-Password-1" },
      "unknown id": { user: { case: "userId" as const, value: `${userId}x` }, password: "Wrong-Password-1" },
      "unknown name": { user: { case: "loginName" as const, value: `${userName}-nobody` }, password: "Wrong-Password-1" },
      "no password yet": { user: { case: "userId" as const, value: initial }, password: "Wrong-Password-1" },
      "machine user": { user: { case: "userId" as const, value: machine }, password: "Wrong-Password-1" },
      // The right password of someone else is wrong for them all the same.
      "right password, other user": { user: { case: "userId" as const, value: initial }, password: GOOD },
    };
    const answers = new Map<string, unknown>();
    for (const [label, request] of Object.entries(attempts)) {
      const { code, reason, message, metadata, fields } = await failure(login(protocol).verifyPassword(request));
      answers.set(label, { code, reason, message, metadata, fields });
    }
    const expected = { code: Code.InvalidArgument, reason: "password.invalid", message: expect.any(String), metadata: {}, fields: [] };
    for (const [label, answer] of answers) expect({ label, answer }).toEqual({ label, answer: expected });
    expect(new Set([...answers.values()].map((a) => JSON.stringify(a))).size).toBe(1);

    expect((await eventsOf(t, "user", userId)).filter((e) => e.type === "user.password.check_failed").map((e) => e.payload)).toEqual([
      { cause: "wrong_password", failedAttempts: 1 },
      { cause: "wrong_password", failedAttempts: 2 },
    ]);
    expect((await eventsOf(t, "user", initial)).filter((e) => e.type === "user.password.check_failed").map((e) => e.payload)).toEqual([
      { cause: "no_password" },
      { cause: "no_password" },
    ]);
    const { instanceId } = await t.clients.client((await import("../../gen/gatehouse/admin/v1/instance_pb.js")).InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({});
    const signIns = (await eventsOf(t, "sign_in", instanceId)).map((e) => e.payload);
    expect(signIns).toEqual(expect.arrayContaining([
      { cause: "unknown_user", userId: `${userId}x` },
      { cause: "unknown_user", loginNameDigest: expect.stringMatching(/^[0-9a-f]{32}$/) },
    ]));
    // The name an unknown-user attempt gave is not in the log (it is where a mistyped password lands).
    expect(JSON.stringify(signIns)).not.toContain(`${userName}-nobody`);
  });

  it("an unknown login name is logged as a keyed digest: one per name whatever its case, another for another name", async () => {
    n += 1;
    const name = `Digest-Nobody-${n}`;
    const { instanceId } = await t.clients.client((await import("../../gen/gatehouse/admin/v1/instance_pb.js")).InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({});
    const before = (await eventsOf(t, "sign_in", instanceId)).length;
    for (const value of [name, name.toUpperCase(), ` ${name.toLowerCase()} `, `${name}-other`]) {
      await login().verifyPassword({ user: { case: "loginName", value }, password: "Wrong-Password-1" }).catch(() => undefined);
    }
    const digests = (await eventsOf(t, "sign_in", instanceId)).slice(before).map((e) => (e.payload as { loginNameDigest?: string }).loginNameDigest);
    expect(digests).toHaveLength(4);
    expect(new Set(digests.slice(0, 3)).size).toBe(1);
    expect(digests[3]).not.toBe(digests[0]);
  });

  it("costs about the same: an unknown user and one without a password are verified against a dummy argon2id, not answered at once", async () => {
    const { userId } = await newUser({ password: GOOD });
    n += 1;
    const { userId: initial } = await admin().createHumanUser({ userName: `timed-no-password-${n}`, profile: { firstName: "No", lastName: "Password" }, email: { email: `timed-${n}@example.com` } });
    // CPU time of this process (the in-process server, its verifier threads, the client), not wall time: what the
    // answer costs, which other work on a shared machine does not stretch.
    const cost = async (request: Parameters<ReturnType<typeof login>["verifyPassword"]>[0]) => {
      const start = process.cpuUsage();
      await login().verifyPassword(request).catch(() => undefined);
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000;
    };
    // Warm up (the dummy hash is made on first use; connections open).
    await cost({ user: { case: "loginName", value: "nobody-at-all" }, password: "x" });
    const median = async (request: Parameters<typeof cost>[0]) => {
      const runs: number[] = [];
      for (let i = 0; i < 5; i++) runs.push(await cost(request));
      return runs.sort((a, b) => a - b)[2]!;
    };
    const wrong = await median({ user: { case: "userId", value: userId }, password: "Wrong-Password-1" });
    const unknown = await median({ user: { case: "loginName", value: `nobody-${n}` }, password: "Wrong-Password-1" });
    const withoutPassword = await median({ user: { case: "userId", value: initial }, password: "Wrong-Password-1" });
    // A default argon2id costs about 12 ms of CPU here; an answer without one costs well under 2. Within a factor, not
    // equal: the commit and the lockout counter of a wrong password cost a little more.
    for (const other of [unknown, withoutPassword]) {
      expect(other).toBeGreaterThan(wrong / 3);
      expect(wrong).toBeGreaterThan(other / 3);
    }
  });
});

describe("held users are told why, without checking the password", () => {
  it("a locked user is failed_precondition user.locked; a deactivated one user.inactive; a user of a deactivated organization organization.inactive", async () => {
    const locked = await newUser({ password: GOOD });
    await admin().lockUser({ userId: locked.userId });
    expect(await failure(login().verifyPassword({ user: { case: "userId", value: locked.userId }, password: GOOD }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.locked" });
    expect(await failure(login().verifyPassword({ user: { case: "userId", value: locked.userId }, password: "Wrong-Password-1" }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.locked" });
    expect((await storedPassword(t, locked.userId)).failedAttempts).toBe(0);

    // Deactivated and locked: deactivation is the one told (the longer-lived hold, as authentication orders them).
    const both = await newUser({ password: GOOD });
    await admin().lockUser({ userId: both.userId });
    await admin().deactivateUser({ userId: both.userId });
    expect(await failure(login().verifyPassword({ user: { case: "userId", value: both.userId }, password: GOOD }))).toMatchObject({ reason: "user.inactive" });

    const inactive = await newUser({ password: GOOD });
    await admin().deactivateUser({ userId: inactive.userId });
    expect(await failure(login().verifyPassword({ user: { case: "loginName", value: inactive.userName }, password: GOOD }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.inactive" });
    expect((await eventsOf(t, "user", inactive.userId)).filter((e) => e.type === "user.password.check_failed").map((e) => e.payload)).toEqual([{ cause: "inactive" }]);

    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
    const { organizationId: closed } = await orgs.createOrganization({ name: `Closed ${++n}` });
    const { userId } = await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: closed }).createHumanUser({
      userName: `closed-${n}`,
      profile: { firstName: "Clo", lastName: "Sed" },
      email: { email: `closed-${n}@example.com`, isEmailVerified: true },
      password: GOOD,
    });
    await login().verifyPassword({ user: { case: "userId", value: userId }, password: GOOD });
    await orgs.deactivateOrganization({ organizationId: closed });
    expect(await failure(login().verifyPassword({ user: { case: "userId", value: userId }, password: GOOD }))).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.inactive" });
  });
});

describe("who may check passwords", () => {
  it("IAM_LOGIN_CLIENT and IAM_OWNER may; organization roles and the instance viewer may not, for existing and unknown users alike", async () => {
    const { userId } = await newUser({ password: GOOD });
    const request = { user: { case: "userId" as const, value: userId }, password: GOOD };
    await usersAs(t, { token: t.server.adminToken }).verifyPassword(request);
    await login("grpc-h2c").verifyPassword(request);
    const instance = t.clients.client((await import("../../gen/gatehouse/admin/v1/instance_pb.js")).InstanceService, "connect-json-http1", { token: t.server.adminToken });
    const viewer = await createActor(t.clients, t.server.adminToken, orgId, `iam-viewer-${++n}`);
    await instance.addInstanceMember({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });
    for (const roles of [["ORG_OWNER"], ["ORG_USER_MANAGER"], []]) {
      const actor = await createActor(t.clients, t.server.adminToken, orgId, `not-a-login-client-${++n}`, roles);
      for (const caller of [actor, viewer]) {
        for (const value of [userId, `${userId}x`]) {
          expect(await failure(usersAs(t, caller).verifyPassword({ user: { case: "userId", value }, password: GOOD }))).toMatchObject({
            code: Code.PermissionDenied,
            reason: "permission.denied",
            metadata: { permission: "user.password.check" },
          });
        }
      }
    }
  });

  it("a login client can do nothing else: it reads no user, lists none and sets no password", async () => {
    const { userId } = await newUser({ password: GOOD });
    const asClient = usersAs(t, loginClient, "connect-json-http1", orgId);
    for (const call of [asClient.getUser({ userId }), asClient.listUsers({}), asClient.setPassword({ userId, password: GOOD })]) {
      expect(await failure(call)).toMatchObject({ code: Code.PermissionDenied });
    }
  });

  it("with x-service-orgid, a user of another organization is unknown there", async () => {
    const { userId, userName } = await newUser({ password: GOOD });
    const { organizationId: other } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: `Other ${++n}` });
    await usersAs(t, loginClient, "connect-json-http1", orgId).verifyPassword({ user: { case: "loginName", value: userName }, password: GOOD });
    expect(await failure(usersAs(t, loginClient, "connect-json-http1", other).verifyPassword({ user: { case: "userId", value: userId }, password: GOOD }))).toMatchObject({
      code: Code.InvalidArgument,
      reason: "password.invalid",
    });
  });

  it("a request naming no user, or without a password, is request.invalid", async () => {
    expect(await failure(login().verifyPassword({ password: GOOD }))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid" });
    expect(await failure(login().verifyPassword({ user: { case: "loginName", value: "someone" }, password: "" }))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["password"] });
  });
});

describe("secrets", () => {
  it("no password, hash or imported hash appears in an event or a log line", async () => {
    const hash = importedHashes.hashes.find((h) => h.scheme.startsWith("bcrypt"))!.hash;
    const { userId, userName } = await newUser({ hashedPassword: hash });
    await login().verifyPassword({ user: { case: "loginName", value: userName }, password: "Typed-By-Mistake-7" }).catch(() => undefined);
    await login().verifyPassword({ user: { case: "loginName", value: userName }, password: importedHashes.password });
    const rehashed = (await storedPassword(t, userId)).hash!;
    const { events } = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ pageSize: 1000, fromSequence: 0n });
    const trail = JSON.stringify(events.map((e) => e.payload));
    const logs = t.server.logs.text;
    for (const secret of [importedHashes.password, "Typed-By-Mistake-7", GOOD, hash, rehashed, rehashed.split("$").at(-1)!]) {
      expect(trail.includes(secret), `the event log holds ${secret}`).toBe(false);
      expect(logs.includes(secret), `the server log holds ${secret}`).toBe(false);
    }
    expect(errorShape(await login().verifyPassword({ user: { case: "userId", value: userId }, password: "Typed-By-Mistake-7" }).catch((e: unknown) => e)).message).not.toContain("Typed-By-Mistake-7");
  });
});
