import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { initializeUserWithCode } from "../../src/commands/initialize-user.js";
import { pendingCode } from "../../src/queries/pending-code.js";
import type { Deps } from "../../src/context.js";
import type { PasswordPolicy } from "../../src/domain/password-policy.js";
import type { Store } from "../../src/store/store.js";
import { DomainError } from "../../src/domain/errors.js";
import { failure } from "../support/errors.js";
import { eventsOf } from "../support/login-client.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { storedRow } from "../support/stored-rows.js";
import { eventTypesOf, interleavedDeps, race, typed } from "./rules-support.js";

/**
 * The init-code path the hosted "initialize account" page calls (src/commands/initialize-user.ts): the code of the
 * initialization mail sets a first password, with VerifyEmail's attempt limit, expiry and single use, under the
 * password policy, and verifies the address that mail went to. Users are made and read back over the API; the
 * command is called in-process, as the page calls it.
 */
const t = useTestServer();
let orgId: string;
const deps = (): Deps => t.server.gatehouse.deps;
const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
const GOOD = "Fresh-Start-2026";

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Init rules" }));
});

/** The init code in an initialization mail: the `code` parameter of its set-password link. */
function initCodeIn(text: string): string | undefined {
  const link = /(http\S+\/ui\/login\/user\/init\?\S+)/.exec(text)?.[1];
  return link ? (new URL(link).searchParams.get("code") ?? undefined) : undefined;
}

let n = 0;
/** A new human user without a password (INITIAL, an initialization mail with an init code), and that mail's codes. */
async function newUser(options: { emailVerified?: boolean } = {}) {
  n += 1;
  const email = `init-${n}@example.com`;
  const { userId } = await users().createHumanUser({
    userName: `init-user-${n}`,
    profile: { firstName: "Ini", lastName: `Tial ${n}` },
    email: { email, isEmailVerified: options.emailVerified ?? false },
  });
  const mail = await lastMailTo(t.server, email);
  const initCode = initCodeIn(mail?.text ?? "");
  if (!initCode) throw new Error("the initialization mail carries an init code");
  return { userId, email, initCode, emailCode: emailCodeIn(mail!) };
}
const wrong = (code: string) => (code[0] === "A" ? "B" : "A") + code.slice(1);
const userOf = async (userId: string) => (await users().getUser({ userId })).user!;
const isEmailVerified = (user: Awaited<ReturnType<typeof userOf>>) => (user.type.case === "human" ? user.type.value.email?.isEmailVerified : undefined);
const storedUser = (userId: string) =>
  storedRow<{ password_hash: string | null; password_change_required: number | boolean | null }>(t.server, "select password_hash, password_change_required from users where id = ?", userId);
const newUserEmail = async (userId: string) => {
  const user = await userOf(userId);
  return user.type.case === "human" ? user.type.value.email?.email : undefined;
};
const refusal = async (promise: Promise<unknown>) => typed((await promise.then(() => undefined, (e: unknown) => e)) as DomainError);

/** The server's deps, with a store whose instance and password policy read as given. */
function withStored(stored: { instance?: "none"; policy?: PasswordPolicy }): Deps {
  const store = new Proxy(deps().store, {
    get(target, property, receiver) {
      if (property === "getInstance" && stored.instance === "none") return async () => undefined;
      if (property === "getPasswordPolicy" && stored.policy) return async () => stored.policy;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as Store;
  return { ...deps(), store };
}

describe("the first password an init code sets", () => {
  it("is checked against the instance's stored password policy, not a built-in one", async () => {
    const { userId, initCode } = await newUser();
    const strict = { minLength: 20, requireUppercase: true, requireLowercase: true, requireDigit: true, requireSymbol: true };
    const error = await initializeUserWithCode(withStored({ policy: strict }), { userId, code: initCode, password: GOOD }).catch((e: unknown) => e as DomainError);
    expect(typed(error as DomainError)).toMatchObject({ kind: "invalid_argument", reason: "password.policy" });
    expect((error as DomainError).violations.map((v) => v.rule)).toEqual(["password.policy.min_length"]);
  });

  it("is checked against the default policy while no instance is stored", async () => {
    const error = await initializeUserWithCode(withStored({ instance: "none" }), { userId: "any", code: "any", password: "lowercase-only" }).catch((e: unknown) => e as DomainError);
    expect((error as DomainError).violations.map((v) => v.rule)).toEqual(["password.policy.uppercase", "password.policy.digit"]);
  });
});

describe("a right init code", () => {
  it("sets the password (argon2id, no change required), verifies the email the mail went to, makes the user ACTIVE — one commit, acted by the user", async () => {
    const { userId, initCode, emailCode } = await newUser();
    expect((await userOf(userId)).state).toBe(UserState.INITIAL);
    const { details } = await initializeUserWithCode(deps(), { userId, code: ` ${initCode.toLowerCase()} `, password: GOOD });
    const user = await userOf(userId);
    expect(user.state).toBe(UserState.ACTIVE);
    expect(isEmailVerified(user)).toBe(true);
    const stored = await storedUser(userId);
    expect(stored.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(Boolean(stored.password_change_required)).toBe(false);
    const trail = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateType: "user", aggregateId: userId, pageSize: 100 });
    const last = trail.events.slice(-2);
    expect(last.map((e) => e.eventType)).toEqual(["user.initialized", "user.email.verified"]);
    expect(new Set(last.map((e) => e.sequence)).size).toBe(2);
    for (const event of last) expect(event.actor).toBe(userId);
    expect(details.sequence).toBe(Number(last[1]!.sequence));
    expect(details.resourceOwner).toBe(orgId);
    // What happened, by the code that did it.
    const [initialized, verified] = (await eventsOf(t, "user", userId)).slice(-2).map((e) => e.payload);
    expect(initialized).toEqual({ codeId: expect.any(String), passwordChangeRequired: false, emailVerified: true, state: "active" });
    expect(verified).toEqual({ email: (await newUserEmail(userId)) ?? "", codeId: initialized!["codeId"] });
    // The email code that came in the same mail is void now: nothing is left to verify.
    expect(await failure(users().verifyEmail({ userId, verificationCode: emailCode! }))).toMatchObject({ code: Code.FailedPrecondition, reason: "email.already_verified" });
    // The payloads never carry the password, its hash or the code.
    const text = JSON.stringify(trail.events.map((e) => e.payload));
    for (const secret of [GOOD, stored.password_hash!, initCode]) expect(text).not.toContain(secret);
  });

  it("is single use: the same code again is init_code.invalid, and the password stays", async () => {
    const { userId, initCode } = await newUser();
    await initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD });
    const before = (await storedUser(userId)).password_hash;
    expect(await refusal(initializeUserWithCode(deps(), { userId, code: initCode, password: "Another-Pass-99" }))).toEqual({ kind: "invalid_argument", reason: "init_code.invalid", metadata: {} });
    expect((await storedUser(userId)).password_hash).toBe(before);
    expect((await pendingCode(deps(), userId, "init")).state).toBe("used");
  });

  it("for a user whose email was verified already makes it ACTIVE without a second verification", async () => {
    const { userId, initCode } = await newUser({ emailVerified: true });
    await initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD });
    expect((await userOf(userId)).state).toBe(UserState.ACTIVE);
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type === "user.email.verified")).toEqual([]);
    expect((await eventsOf(t, "user", userId)).at(-1)?.payload).toEqual({ codeId: expect.any(String), passwordChangeRequired: false, emailVerified: false, state: "active" });
  });

  it("of two concurrent uses, exactly one wins; the other is refused with a typed error", async () => {
    const { userId, initCode } = await newUser();
    const { succeeded, refusals } = await race([
      initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD }),
      initializeUserWithCode(deps(), { userId, code: initCode, password: "Second-Try-4242" }),
    ]);
    expect(succeeded).toBe(1);
    // The loser finds the code used: invalid, as a code no longer pending is — not "too many attempts".
    expect(refusals.map((e) => e.reason)).toEqual(["init_code.invalid"]);
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type === "user.initialized")).toHaveLength(1);
  });

  it("racing an admin's SetPassword (which voids the code) is init_code.invalid, not exhausted: the admin's password stays", async () => {
    const { userId, initCode } = await newUser();
    const meanwhile = () => users().setPassword({ userId, password: "Admin-Chosen-1", changeRequired: true });
    const refused = await refusal(initializeUserWithCode(interleavedDeps(t, meanwhile), { userId, code: initCode, password: GOOD }));
    expect(refused).toMatchObject({ kind: "invalid_argument", reason: "init_code.invalid" });
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type === "user.initialized")).toEqual([]);
  });

  it("whose last attempt another caller used meanwhile is init_code.exhausted", async () => {
    const { userId, initCode } = await newUser();
    for (let i = 0; i < 4; i++) await refusal(initializeUserWithCode(deps(), { userId, code: wrong(initCode), password: GOOD }));
    const meanwhile = () => initializeUserWithCode(deps(), { userId, code: wrong(initCode), password: GOOD }).catch(() => undefined);
    const refused = await refusal(initializeUserWithCode(interleavedDeps(t, meanwhile), { userId, code: initCode, password: GOOD }));
    expect(refused).toMatchObject({ reason: "init_code.exhausted" });
  });
});

describe("refused attempts", () => {
  it("a wrong code is init_code.invalid with attemptsLeft, recorded; after five the right one is init_code.exhausted", async () => {
    const { userId, initCode } = await newUser();
    for (let left = 4; left >= 0; left--) {
      expect(await refusal(initializeUserWithCode(deps(), { userId, code: wrong(initCode), password: GOOD }))).toEqual({
        kind: "invalid_argument",
        reason: "init_code.invalid",
        metadata: { attemptsLeft: String(left) },
      });
    }
    expect((await pendingCode(deps(), userId, "init")).state).toBe("exhausted");
    expect(await refusal(initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD }))).toEqual({ kind: "failed_precondition", reason: "init_code.exhausted", metadata: {} });
    const failures = (await eventsOf(t, "user", userId)).filter((e) => e.type === "user.initialization.failed");
    expect(failures.map((e) => e.payload)).toEqual(Array(5).fill({ outcome: "invalid", codeId: expect.any(String) }));
    expect((await storedUser(userId)).password_hash).toBeNull();
    expect((await userOf(userId)).state).toBe(UserState.INITIAL);
  });

  it("an expired code is init_code.expired (72 hours), and appends nothing", async () => {
    const { userId, initCode } = await newUser();
    t.server.clock.advance(72 * 3_600_000 - 1);
    expect((await pendingCode(deps(), userId, "init")).state).toBe("usable");
    t.server.clock.advance(1);
    try {
      expect((await pendingCode(deps(), userId, "init")).state).toBe("expired");
      const before = await eventTypesOf(t, "user", userId);
      expect(await refusal(initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD }))).toEqual({ kind: "invalid_argument", reason: "init_code.expired", metadata: {} });
      expect(await eventTypesOf(t, "user", userId)).toEqual(before);
    } finally {
      t.server.clock.advance(-72 * 3_600_000);
    }
  });

  it("a password the policy refuses is password.policy naming every broken rule, and spends no attempt", async () => {
    const { userId, initCode } = await newUser();
    const error = (await initializeUserWithCode(deps(), { userId, code: initCode, password: "short" }).catch((e: unknown) => e)) as DomainError;
    expect(typed(error)).toMatchObject({ kind: "invalid_argument", reason: "password.policy" });
    expect(error.violations.map((v) => [v.field, v.rule])).toEqual([
      ["password", "password.policy.min_length"],
      ["password", "password.policy.uppercase"],
      ["password", "password.policy.digit"],
      ["password", "password.policy.symbol"],
    ]);
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type.startsWith("user.initializ"))).toEqual([]);
    await initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD });
    expect((await userOf(userId)).state).toBe(UserState.ACTIVE);
  });

  it("an unknown user, a machine user and a user without an init code all answer init_code.invalid, like a wrong code", async () => {
    const { userId: machine } = await users().createMachineUser({ userName: `init-robot-${++n}`, name: "Robot" });
    const { userId: withPassword } = await users().createHumanUser({
      userName: `init-has-password-${n}`,
      profile: { firstName: "Has", lastName: "Password" },
      email: { email: `has-password-${n}@example.com`, isEmailVerified: true },
      password: GOOD,
    });
    for (const userId of ["no-such-user", machine, withPassword]) {
      expect(await refusal(initializeUserWithCode(deps(), { userId, code: "ABC123", password: GOOD }))).toEqual({ kind: "invalid_argument", reason: "init_code.invalid", metadata: {} });
      expect((await pendingCode(deps(), userId, "init")).state).toBe("none");
    }
  });

  it("a locked or deactivated user learns it only with the right code, which stays unspent", async () => {
    const locked = await newUser();
    await users().lockUser({ userId: locked.userId });
    expect(await refusal(initializeUserWithCode(deps(), { userId: locked.userId, code: wrong(locked.initCode), password: GOOD }))).toMatchObject({ reason: "init_code.invalid" });
    expect(await refusal(initializeUserWithCode(deps(), { userId: locked.userId, code: locked.initCode, password: GOOD }))).toEqual({ kind: "failed_precondition", reason: "user.locked", metadata: {} });
    await users().unlockUser({ userId: locked.userId });
    await initializeUserWithCode(deps(), { userId: locked.userId, code: locked.initCode, password: GOOD });
    expect((await userOf(locked.userId)).state).toBe(UserState.ACTIVE);

    const inactive = await newUser();
    await users().deactivateUser({ userId: inactive.userId });
    expect(await refusal(initializeUserWithCode(deps(), { userId: inactive.userId, code: inactive.initCode, password: GOOD }))).toEqual({ kind: "failed_precondition", reason: "user.inactive", metadata: {} });
    expect((await pendingCode(deps(), inactive.userId, "init")).state).toBe("usable");
  });
});

describe("an address change while the set-password invitation is pending (the invitation follows the address)", () => {
  it("SetEmail: the link mailed to the old address stops working; the new address gets an initialization mail whose link sets the password and verifies it", async () => {
    const { userId, initCode } = await newUser();
    await users().setEmail({ userId, email: `moved-${n}@example.com` });
    expect(await refusal(initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD }))).toMatchObject({ reason: "init_code.invalid" });
    const mail = (await lastMailTo(t.server, `moved-${n}@example.com`))!;
    expect(mail.template).toBe("user.initialization");
    expect(mail.subject).toMatch(/new account/i);
    const moved = initCodeIn(mail.text);
    expect(moved).toBeDefined();
    await initializeUserWithCode(deps(), { userId, code: moved!, password: GOOD });
    const user = await userOf(userId);
    expect(user.state).toBe(UserState.ACTIVE);
    expect(isEmailVerified(user)).toBe(true);
  });

  it("SetEmail with isVerified: the old link stops working and the new address gets the set-password link alone", async () => {
    const { userId, initCode } = await newUser();
    await users().setEmail({ userId, email: `trusted-${n}@example.com`, isVerified: true });
    expect(await refusal(initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD }))).toMatchObject({ reason: "init_code.invalid" });
    const mail = (await lastMailTo(t.server, `trusted-${n}@example.com`))!;
    expect(emailCodeIn(mail)).toBeUndefined();
    await initializeUserWithCode(deps(), { userId, code: initCodeIn(mail.text)!, password: GOOD });
    expect((await userOf(userId)).state).toBe(UserState.ACTIVE);
  });

  it("SetEmail after the link was used: no invitation is pending, so the new address gets a verification mail, not a set-password link", async () => {
    const { userId, initCode } = await newUser();
    await initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD });
    await users().setEmail({ userId, email: `after-init-${n}@example.com` });
    const mail = (await lastMailTo(t.server, `after-init-${n}@example.com`))!;
    expect(emailCodeIn(mail)).toBeDefined();
    expect(initCodeIn(mail.text)).toBeUndefined();
    expect((await userOf(userId)).state).toBe(UserState.ACTIVE);
  });

  it("SetEmail with returnCode: the old link stops working, and nothing is mailed", async () => {
    const { userId, initCode } = await newUser();
    await users().setEmail({ userId, email: `returned-${n}@example.com`, returnCode: true });
    expect(await refusal(initializeUserWithCode(deps(), { userId, code: initCode, password: GOOD }))).toMatchObject({ reason: "init_code.invalid" });
    expect(await lastMailTo(t.server, `returned-${n}@example.com`)).toBeUndefined();
  });
});
