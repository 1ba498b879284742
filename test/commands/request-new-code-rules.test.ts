import { describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { resolveLinkHolder } from "../../src/access/link-holder.js";
import { verifyEmail } from "../../src/commands/email-verification.js";
import { requestNewCode } from "../../src/commands/request-new-code.js";
import { DomainError } from "../../src/domain/errors.js";
import { emailCodeIn, queuedMails } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { race, racingDeps, typed } from "./rules-support.js";

/** "Send me a new code" (the hosted pages' button), run in-process against a real server's store; read back over the API. */
const t = useTestServer();
let n = 0;
const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
const deps = () => t.server.gatehouse.deps;
const MINUTE = 60_000;

async function newUser(options: { password?: boolean } = {}) {
  const email = `new-code-${++n}@example.com`;
  const { userId } = await users().createHumanUser({
    userName: `new-code-${n}`,
    profile: { firstName: "Nu", lastName: "Code" },
    email: { email },
    ...(options.password === false ? {} : { password: "Sup3r-secret!" }),
  });
  const { user } = await users().getUser({ userId });
  const holder = await resolveLinkHolder(deps(), { userId, orgId: user!.details!.resourceOwner });
  return { userId, email, holder };
}
const mailsTo = async (email: string) => (await queuedMails(t.server)).filter((mail) => mail.recipient === email);
async function exhaust(holder: Awaited<ReturnType<typeof newUser>>["holder"]) {
  for (let i = 0; i < 5; i++) await verifyEmail(deps(), holder.caller, { userId: holder.user.id, verificationCode: "ZZZZZZ" }).catch(() => undefined);
}
/** The typed refusal of a request that must fail. */
async function refusal(call: Promise<unknown>) {
  const error = await call.then(() => "succeeded", (reason: unknown) => reason);
  expect(error).toBeInstanceOf(DomainError);
  return typed(error as DomainError);
}

describe("requestNewCode", () => {
  it("mails a new email code that replaces the used-up one, recorded as the user's own doing", async () => {
    const { userId, email, holder } = await newUser();
    await exhaust(holder);
    t.server.clock.advance(MINUTE);
    await requestNewCode(deps(), holder, "email");
    const mails = await mailsTo(email);
    expect(mails.map((mail) => mail.template)).toEqual(["user.initialization", "user.verification"]);
    const newCode = emailCodeIn(mails[1]!)!;
    expect(newCode).not.toBe(emailCodeIn(mails[0]!));
    await verifyEmail(deps(), holder.caller, { userId, verificationCode: newCode });
    const { events } = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateId: userId });
    const added = events.filter((e) => e.eventType === "user.code.added").at(-1)!;
    expect(added.actor).toBe(userId);
    expect(JSON.stringify(added.payload)).not.toContain(newCode);
    expect(events.filter((e) => e.eventType === "user.notification.queued").at(-1)).toMatchObject({ actor: userId });
  });

  it("refuses while the code mailed last still works, for a verified email, and an init code for a user with a password", async () => {
    const { holder } = await newUser();
    expect(await refusal(requestNewCode(deps(), holder, "email"))).toMatchObject({ kind: "failed_precondition", reason: "code.still_valid" });
    expect(await refusal(requestNewCode(deps(), holder, "init"))).toMatchObject({ kind: "failed_precondition", reason: "user.already_initialized" });
    const { userId, email } = await newUser();
    await users().setEmail({ userId, email, isVerified: true, returnCode: false });
    const verified = await resolveLinkHolder(deps(), { userId, orgId: holder.user.orgId });
    expect(await refusal(requestNewCode(deps(), verified, "email"))).toMatchObject({ kind: "failed_precondition", reason: "email.already_verified" });
  });

  it("counts every code mail to the user: a sixth within the hour is refused until the oldest leaves it", async () => {
    const { userId, email, holder } = await newUser();
    // The initialization mail and four more codes an admin had mailed, a minute apart: five in the hour.
    for (let i = 0; i < 4; i++) {
      t.server.clock.advance(MINUTE);
      await users().resendEmailCode({ userId, returnCode: false });
    }
    await exhaust(holder);
    t.server.clock.advance(MINUTE);
    // 5 minutes after the first mail: it leaves the hour in 55 minutes.
    expect(await refusal(requestNewCode(deps(), holder, "email"))).toMatchObject({ kind: "resource_exhausted", reason: "code.resend_limited", metadata: { retryAfterSeconds: String(55 * 60) } });
    expect(await mailsTo(email)).toHaveLength(5);
    t.server.clock.advance(55 * MINUTE);
    await requestNewCode(deps(), holder, "email");
    expect(await mailsTo(email)).toHaveLength(6);
  });

  it("of two requests racing past the limit, mails one code; the other is told a code was just sent", async () => {
    const { email, holder } = await newUser();
    await exhaust(holder);
    t.server.clock.advance(MINUTE);
    const slow = racingDeps(t);
    const { succeeded, refusals } = await race([requestNewCode(slow, holder, "email"), requestNewCode(slow, holder, "email")]);
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "resource_exhausted", reason: "code.resend_limited", metadata: { retryAfterSeconds: "60" } }]);
    expect((await mailsTo(email)).map((mail) => mail.template)).toEqual(["user.initialization", "user.verification"]);
  });
});
