import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { verifyEmail } from "../../src/commands/email-verification.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { ownerCaller } from "../support/slow-store.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, typed } from "./rules-support.js";

/**
 * VerifyEmail's answers when there is nothing to verify (user.proto): `user.not_human` for a machine
 * user, and `email_code.invalid` when no code is pending and the email is unverified; neither appends
 * an event ("an attempt when no code is pending appends none").
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Email rules" }));
  caller = await adminCaller(t, orgId);
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });

describe("VerifyEmail with nothing to verify", () => {
  it("for a machine user is failed_precondition user.not_human, and appends nothing", async () => {
    const { userId } = await users().createMachineUser({ userName: "no-mailbox", name: "Robot" });
    const error = await failure(users().verifyEmail({ userId, verificationCode: "ABC123" }));
    expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_human" });
    expect(await eventTypesOf(t, "user", userId)).toEqual(["user.machine.added"]);
  });

  it("when the pending code was voided after the user was read (its address set verified meanwhile) is email_code.invalid, and appends nothing of the attempt", async () => {
    const { userId } = await users().createHumanUser({
      userName: "voided-code",
      profile: { firstName: "Void", lastName: "Ed" },
      email: { email: "voided@example.com", isEmailVerified: false },
    });
    // The attempt reads the user (unverified), then SetEmail marks a new address verified and voids
    // the code, then the attempt looks for the code: none is pending, and the user it read is unverified.
    const deps = interleavedDeps(t, () => users().setEmail({ userId, email: "voided-new@example.com", isVerified: true }), "findCode");
    const error = await verifyEmail(deps, caller, { userId, verificationCode: "ABC123" }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "invalid_argument", reason: "email_code.invalid", metadata: {} });
    const types = await eventTypesOf(t, "user", userId);
    expect(types.filter((type) => type.startsWith("user.email.verif"))).toEqual([]);
    // SetEmail's events are the last: the change, and the set-password invitation re-sent to the new address (the user
    // has no password yet).
    expect(types.slice(types.lastIndexOf("user.email.changed"))).toEqual(["user.email.changed", "user.code.added", "user.notification.queued"]);
  });
});

let n = 0;
/** A new human user of this file's organization with an unverified email, and a pending code for it. */
async function unverifiedUser(options: { password?: string } = {}) {
  n += 1;
  const email = `pending-${n}@example.com`;
  const { userId } = await users().createHumanUser({
    userName: `pending-user-${n}`,
    profile: { firstName: "Pen", lastName: `Ding ${n}` },
    email: { email, isEmailVerified: false },
    ...(options.password ? { password: options.password } : {}),
  });
  const { verificationCode } = await users().resendEmailCode({ userId, returnCode: true });
  return { userId, email, code: verificationCode! };
}
const wrong = (code: string) => (code[0] === "A" ? "B" : "A") + code.slice(1);
const userOf = async (userId: string) => (await users().getUser({ userId })).user;
const emailVerified = (user: Awaited<ReturnType<typeof userOf>>) => (user?.type.case === "human" ? user.type.value.email?.isEmailVerified : undefined);

describe("VerifyEmail and the user's state (user.proto UserState: INITIAL until the email is verified and a password is set)", () => {
  it("makes an INITIAL user with a password ACTIVE", async () => {
    const { userId, code } = await unverifiedUser({ password: "Sup3r-secret!" });
    expect((await userOf(userId))?.state).toBe(UserState.INITIAL);
    await users().verifyEmail({ userId, verificationCode: code });
    const user = await userOf(userId);
    expect(emailVerified(user)).toBe(true);
    expect(user?.state).toBe(UserState.ACTIVE);
  });

  it("makes an INITIAL user with a passwordless registration and no password ACTIVE (it has a way to sign in)", async () => {
    n += 1;
    const { userId } = await users().createHumanUser({
      userName: `passwordless-user-${n}`,
      profile: { firstName: "Pass", lastName: `Key ${n}` },
      email: { email: `passwordless-${n}@example.com`, isEmailVerified: false },
      requestPasswordlessRegistration: true,
    });
    const { verificationCode } = await users().resendEmailCode({ userId, returnCode: true });
    expect((await userOf(userId))?.state).toBe(UserState.INITIAL);
    await users().verifyEmail({ userId, verificationCode: verificationCode! });
    expect((await userOf(userId))?.state).toBe(UserState.ACTIVE);
  });

  it("leaves an INITIAL user without a password INITIAL: the email is verified, but it still has to set a password", async () => {
    const { userId, code } = await unverifiedUser();
    await users().verifyEmail({ userId, verificationCode: code });
    const user = await userOf(userId);
    expect(emailVerified(user)).toBe(true);
    expect(user?.state).toBe(UserState.INITIAL);
  });
});

describe("VerifyEmail when another attempt lands between reading the code and recording this one", () => {
  it("the right code is email_code.exhausted once the fifth wrong attempt got in first: the email stays unverified", async () => {
    const { userId, code } = await unverifiedUser({ password: "Sup3r-secret!" });
    for (let attempt = 1; attempt <= 4; attempt++) await failure(users().verifyEmail({ userId, verificationCode: wrong(code) }));
    // This attempt reads the code (four wrong attempts so far, so it is still pending), then the fifth wrong one lands.
    const fifth = () => failure(users().verifyEmail({ userId, verificationCode: wrong(code) }));
    const deps = interleavedDeps(t, async () => expect(await fifth()).toMatchObject({ reason: "email_code.invalid", metadata: { attemptsLeft: "0" } }));
    const error = await verifyEmail(deps, caller, { userId, verificationCode: code }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "failed_precondition", reason: "email_code.exhausted", metadata: {} });
    const user = await userOf(userId);
    expect(emailVerified(user)).toBe(false);
    expect(user?.state).toBe(UserState.INITIAL);
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type.startsWith("user.email.verif"))).toEqual(Array(5).fill("user.email.verification.failed"));
  });

  it("the right code is email_code.invalid when a new code replaced it meanwhile (ResendEmailCode), not exhausted", async () => {
    const { userId, code } = await unverifiedUser({ password: "Sup3r-secret!" });
    // This attempt reads the code, then a new one is sent: the code it read is no longer the user's.
    const deps = interleavedDeps(t, async () => void (await users().resendEmailCode({ userId })));
    const error = await verifyEmail(deps, caller, { userId, verificationCode: code }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "invalid_argument", reason: "email_code.invalid", metadata: {} });
    expect(emailVerified(await userOf(userId))).toBe(false);
  });

  it("a store failure (the database is busy) is answered as that failure, not as email_code.exhausted, and the code stays usable", async () => {
    const { userId, code } = await unverifiedUser({ password: "Sup3r-secret!" });
    const deps = busyDeps(t, async () => undefined);
    for (const verificationCode of [code, wrong(code)]) {
      const error = await verifyEmail(deps, caller, { userId, verificationCode }).catch((e: unknown) => e);
      expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
    }
    expect(emailVerified(await userOf(userId))).toBe(false);
    // Nothing was recorded, so the retry works.
    await users().verifyEmail({ userId, verificationCode: code });
    expect(emailVerified(await userOf(userId))).toBe(true);
  });
});

describe("ResendEmailCode and SetEmail", () => {
  it("ResendEmailCode without return_code mails a user.verification mail with the new code to the user's address, greeting them by display name", async () => {
    const { userId, email } = await unverifiedUser();
    await users().resendEmailCode({ userId });
    const mail = await lastMailTo(t.server, email);
    expect(mail?.template).toBe("user.verification");
    const { user } = await users().getUser({ userId });
    const displayName = user?.type.case === "human" ? user.type.value.profile?.displayName : undefined;
    expect(displayName).toBe(`Pen Ding ${n}`);
    expect(mail?.text).toContain(displayName);
    expect(mail?.text).not.toContain(user?.userName);
    await users().verifyEmail({ userId, verificationCode: emailCodeIn(mail!)! });
    expect(emailVerified(await userOf(userId))).toBe(true);
  });

  it("SetEmail names `email` (the request's field) when the address is invalid", async () => {
    const { userId } = await unverifiedUser();
    expect(await failure(users().setEmail({ userId, email: "not an address" }))).toMatchObject({ code: Code.InvalidArgument, reason: "email.invalid", fields: ["email"] });
  });
});

describe("VerifyEmail by an administrator of another instance", () => {
  it("finds no user of this instance: user.not_found (its IAM_OWNER manages every organization of its own instance only), and nothing is recorded", async () => {
    const { userId, code } = await unverifiedUser({ password: "Sup3r-secret!" });
    const foreignOwner = ownerCaller("foreign-admin", "foreign-org", "foreign-instance");
    const error = await verifyEmail(t.server.gatehouse.deps, foreignOwner, { userId, verificationCode: code }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "not_found", reason: "user.not_found", metadata: { userId } });
    expect(emailVerified(await userOf(userId))).toBe(false);
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type.startsWith("user.email.verif"))).toEqual([]);
  });
});
