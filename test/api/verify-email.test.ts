import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { storedRow } from "../support/stored-rows.js";
import { createActor } from "../support/world.js";

const t = useTestServer();
let n = 0;
const admin = (protocol: Protocol = "connect-json-http1") => t.clients.client(UserService, protocol, { token: t.server.adminToken });

/** A new unverified human user (with a password) and the code from its initialization mail. */
async function newUser(protocol: Protocol = "connect-json-http1") {
  const email = `verify-${++n}@example.com`;
  const { userId } = await admin(protocol).createHumanUser({
    userName: `verify-${n}`,
    profile: { firstName: "Vera", lastName: "Fy" },
    email: { email },
    password: "Sup3r-secret!",
  });
  const code = emailCodeIn((await lastMailTo(t.server, email))!);
  if (!code) throw new Error("no code in the mail");
  return { userId, code, email };
}
const wrong = (code: string) => (code[0] === "A" ? "B" : "A") + code.slice(1);
const eventTypes = async (userId: string) =>
  (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateId: userId })).events.map((e) => e.eventType);

describe.each(PROTOCOLS)("VerifyEmail (SPEC 4.6) over %s", (protocol) => {
  it("verifies with the mailed code: details without creation date, owned by the user's organization; the user becomes active", async () => {
    const { userId, code } = await newUser();
    const { details } = await admin(protocol).verifyEmail({ userId, verificationCode: code.toLowerCase() });
    expect(details?.creationDate).toBeUndefined();
    expect(details?.changeDate).toBeDefined();
    const { user } = await admin(protocol).getUser({ userId });
    expect(details?.resourceOwner).toBe(user?.details?.resourceOwner);
    expect(details?.sequence).toBe(user?.details?.sequence);
    expect(user?.state).toBe(UserState.ACTIVE);
    expect(user?.type).toMatchObject({ case: "human", value: { email: { isEmailVerified: true } } });
  });

  it("rejects a wrong code, then the sixth attempt after five wrong ones even with the right code", async () => {
    const { userId, code } = await newUser();
    for (let attempt = 1; attempt <= 5; attempt++) {
      const error = await failure(admin(protocol).verifyEmail({ userId, verificationCode: wrong(code) }));
      expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "email_code.invalid", metadata: { attemptsLeft: String(5 - attempt) } });
    }
    expect(await failure(admin(protocol).verifyEmail({ userId, verificationCode: code }))).toMatchObject({ code: Code.FailedPrecondition, reason: "email_code.exhausted" });
    // A new code (ResendEmailCode) replaces the void one.
    const { verificationCode } = await admin(protocol).resendEmailCode({ userId, returnCode: true });
    await admin(protocol).verifyEmail({ userId, verificationCode: verificationCode! });
  });

  it("rejects the code of another user", async () => {
    const first = await newUser();
    const second = await newUser();
    expect(await failure(admin(protocol).verifyEmail({ userId: first.userId, verificationCode: second.code }))).toMatchObject({ reason: "email_code.invalid" });
  });

  it("rejects an expired code (injected clock)", async () => {
    const { userId, code } = await newUser();
    t.server.clock.advance(3_600_000);
    try {
      expect(await failure(admin(protocol).verifyEmail({ userId, verificationCode: code }))).toMatchObject({ code: Code.InvalidArgument, reason: "email_code.expired" });
    } finally {
      t.server.clock.advance(-3_600_000);
    }
  });

  it("rejects reuse after success: the email is verified and no code is pending", async () => {
    const { userId, code } = await newUser();
    await admin(protocol).verifyEmail({ userId, verificationCode: code });
    expect(await failure(admin(protocol).verifyEmail({ userId, verificationCode: code }))).toMatchObject({ code: Code.FailedPrecondition, reason: "email.already_verified" });
  });

  it("answers 404 for an unknown user and 403 for a caller without permission; the user's own token works", async () => {
    expect(await failure(admin(protocol).verifyEmail({ userId: "no-such-user", verificationCode: "ABC123" }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
    const { userId, code } = await newUser();
    const outsider = await createActor(t.clients, t.server.adminToken, (await admin().getUser({ userId })).user!.details!.resourceOwner, `outsider-${protocol}`, ["ORG_OWNER_VIEWER"]);
    const asOutsider = t.clients.client(UserService, protocol, { token: outsider.token });
    expect(await failure(asOutsider.verifyEmail({ userId, verificationCode: code }))).toMatchObject({ code: Code.PermissionDenied });
    const { token } = await admin().addPersonalAccessToken({ userId });
    await t.clients.client(UserService, protocol, { token }).verifyEmail({ userId, verificationCode: code });
  });

  it("records every attempt against a pending code as an event, and none once no code is pending", async () => {
    const { userId, code } = await newUser();
    await failure(admin(protocol).verifyEmail({ userId, verificationCode: wrong(code) }));
    await admin(protocol).verifyEmail({ userId, verificationCode: code });
    await failure(admin(protocol).verifyEmail({ userId, verificationCode: code }));
    const types = (await eventTypes(userId)).filter((type) => type.startsWith("user.email."));
    expect(types).toEqual(["user.email.verification.failed", "user.email.verified"]);
  });
});

describe("VerifyEmail keeps the audit log bounded", () => {
  const emailEvents = async (userId: string) => (await eventTypes(userId)).filter((type) => type.startsWith("user.email."));

  it("appends at most five events per code, however many guesses follow, and none for an expired code", async () => {
    const { userId, code } = await newUser();
    for (let attempt = 0; attempt < 12; attempt++) await failure(admin().verifyEmail({ userId, verificationCode: wrong(code) }));
    expect(await failure(admin().verifyEmail({ userId, verificationCode: code }))).toMatchObject({ reason: "email_code.exhausted" });
    expect(await emailEvents(userId)).toEqual(Array(5).fill("user.email.verification.failed"));

    const expiring = await newUser();
    t.server.clock.advance(3_600_000);
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        expect(await failure(admin().verifyEmail({ userId: expiring.userId, verificationCode: expiring.code }))).toMatchObject({ reason: "email_code.expired" });
      }
    } finally {
      t.server.clock.advance(-3_600_000);
    }
    expect(await emailEvents(expiring.userId)).toEqual([]);
  });

  it("appends no event when no code was ever sent", async () => {
    const { userId } = await admin().createHumanUser({
      userName: `verified-${++n}`,
      profile: { firstName: "Pre", lastName: "Verified" },
      email: { email: `verified-${n}@example.com`, isEmailVerified: true },
      password: "Sup3r-secret!",
    });
    expect(await failure(admin().verifyEmail({ userId, verificationCode: "ABC123" }))).toMatchObject({ code: Code.FailedPrecondition, reason: "email.already_verified" });
    await admin().setEmail({ userId, email: `unverified-${n}@example.com`, isVerified: true });
    expect(await emailEvents(userId)).toEqual(["user.email.changed"]);
  });
});

describe("VerifyEmail under concurrent guessing", () => {
  it("never allows more than five wrong attempts, however many arrive at once", async () => {
    const { userId, code } = await newUser();
    const guesses = Array.from({ length: 30 }, (_, i) => `Z${String(i).padStart(5, "0")}`).filter((guess) => guess !== code);
    await Promise.allSettled(guesses.map((verificationCode) => admin("grpc-h2c").verifyEmail({ userId, verificationCode })));
    // However the 30 raced, the code is void now: the right code no longer works.
    expect(await failure(admin().verifyEmail({ userId, verificationCode: code }))).toMatchObject({ code: Code.FailedPrecondition, reason: "email_code.exhausted" });
    const row = await storedRow<{ attempts: number }>(t.server, "select attempts from one_time_codes where user_id = ? and kind = 'email'", userId);
    expect(row.attempts).toBe(5);
  });
});

describe("VerifyEmail status codes", () => {
  const post = (body: object, token = t.server.adminToken) =>
    fetch(`${t.server.url}/gatehouse.admin.v1.UserService/VerifyEmail`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });

  it("answers HTTP 404 (Connect) and gRPC NOT_FOUND for an unknown user, 403 / PERMISSION_DENIED without permission", async () => {
    expect((await post({ userId: "nobody-here", verificationCode: "ABC123" })).status).toBe(404);
    const { userId, code } = await newUser();
    const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Strangers" });
    const stranger = await createActor(t.clients, t.server.adminToken, organizationId, "stranger", ["ORG_OWNER"]);
    expect((await post({ userId, verificationCode: code }, stranger.token)).status).toBe(403);
    // Existence is not revealed: an unknown id answers the stranger exactly as an existing user does.
    const unknown = await post({ userId: "nobody-here", verificationCode: code }, stranger.token);
    const existing = await post({ userId, verificationCode: code }, stranger.token);
    expect([unknown.status, (await unknown.json()) as unknown]).toEqual([existing.status, (await existing.json()) as unknown]);
    expect(await failure(t.clients.client(UserService, "grpc-h2c", { token: stranger.token }).verifyEmail({ userId, verificationCode: code }))).toMatchObject({ code: Code.PermissionDenied });
  });
});

describe("SetEmail and ResendEmailCode", () => {
  it("a new code voids the previous one; return_code hands the code back instead of mailing it", async () => {
    const { userId, code, email } = await newUser();
    const before = await lastMailTo(t.server, email);
    const { verificationCode } = await admin().resendEmailCode({ userId, returnCode: true });
    expect(await lastMailTo(t.server, email)).toEqual(before);
    expect(await failure(admin().verifyEmail({ userId, verificationCode: code }))).toMatchObject({ reason: "email_code.invalid" });
    await admin().verifyEmail({ userId, verificationCode: verificationCode! });
  });

  it("SetEmail to a new address mails a new code there; marked verified it voids any pending code", async () => {
    const { userId, code } = await newUser();
    await admin().setEmail({ userId, email: " moved@example.com ", isVerified: false });
    const mailed = emailCodeIn((await lastMailTo(t.server, "moved@example.com"))!);
    expect(await failure(admin().verifyEmail({ userId, verificationCode: code }))).toMatchObject({ reason: "email_code.invalid" });
    await admin().verifyEmail({ userId, verificationCode: mailed! });
    const { userId: other, code: otherCode } = await newUser();
    await admin().setEmail({ userId: other, email: "trusted@example.com", isVerified: true });
    expect(await failure(admin().verifyEmail({ userId: other, verificationCode: otherCode }))).toMatchObject({ reason: "email.already_verified" });
  });

  it("refuses to resend for a verified email and to change a machine user's email", async () => {
    const { userId, code } = await newUser();
    await admin().verifyEmail({ userId, verificationCode: code });
    expect(await failure(admin().resendEmailCode({ userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "email.already_verified" });
    const { userId: machine } = await admin().createMachineUser({ userName: "mailless", name: "m" });
    expect(await failure(admin().setEmail({ userId: machine, email: "m@example.com" }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_human" });
  });
});

describe("ListUsers", () => {
  it("pages in creation order and filters by user name and email, case-insensitively", async () => {
    const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Listing" });
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: organizationId });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await users.createHumanUser({ userName: `list-${i}`, profile: { firstName: "L", lastName: `${i}` }, email: { email: `List-${i}@Example.com` } })).userId);
    }
    const first = await users.listUsers({ pageSize: 2 });
    const second = await users.listUsers({ pageSize: 2, pageToken: first.details!.nextPageToken });
    const third = await users.listUsers({ pageSize: 2, pageToken: second.details!.nextPageToken });
    expect([...first.users, ...second.users, ...third.users].map((u) => u.userId)).toEqual(ids);
    expect(first.details?.totalResult).toBe(5n);
    expect(third.details?.nextPageToken).toBe("");
    expect((await users.listUsers({ userName: "LIST-3" })).users.map((u) => u.userId)).toEqual([ids[3]]);
    expect((await users.listUsers({ email: "list-4@example.com" })).users.map((u) => u.userId)).toEqual([ids[4]]);
    expect(await failure(users.listUsers({ pageToken: "forged" }))).toMatchObject({ reason: "page_token.invalid" });
  });
});
