import { describe, expect, it } from "vitest";
import { OnConflict, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { resolveLinkHolder } from "../../src/access/link-holder.js";
import { requestNewCode } from "../../src/commands/request-new-code.js";
import { DomainError } from "../../src/domain/errors.js";
import { importedUser, resultShape } from "../support/import.js";
import { eventsOf } from "../support/login-client.js";
import { emailCodeIn, queuedMails } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";

/**
 * "Send me a new code" (the hosted pages' button, src/commands/request-new-code.ts): what the new mail says and what the
 * audit trail records, a user who was never mailed a code, and a commit that fails for a reason other than a race.
 * Run in-process against a real server's store; read back over the API and from its outbox.
 */
const t = useTestServer();
let n = 0;
const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
const deps = () => t.server.gatehouse.deps;

/** A user imported without mails: an unverified email and no code of any kind. */
async function importedWithoutMail(profile: { displayName?: string } = {}) {
  const userName = `never-mailed-${++n}`;
  const { results } = await users().importHumanUsersBatch({
    onConflict: OnConflict.FAIL,
    users: [importedUser(userName, { email: { email: `${userName}@example.com`, isEmailVerified: false }, profile: { firstName: "Never", lastName: "Mailed", ...profile } })],
  });
  const { userId } = resultShape(results[0]!);
  if (!userId) expect.fail(`the import refused ${userName}`);
  const { user } = await users().getUser({ userId });
  return { userId, email: `${userName}@example.com`, holder: await resolveLinkHolder(deps(), { userId, orgId: user!.details!.resourceOwner }) };
}

describe("a new email code for a user who was never mailed one", () => {
  it("is mailed (only an invitation to set a password needs an earlier one), greeting the user by display name", async () => {
    const { email, holder } = await importedWithoutMail({ displayName: "Lady Ada" });
    await requestNewCode(deps(), holder, "email");
    const mails = (await queuedMails(t.server)).filter((mail) => mail.recipient === email);
    expect(mails.map((mail) => mail.template)).toEqual(["user.verification"]);
    expect(emailCodeIn(mails[0]!)).toMatch(/^[A-Z0-9]{6}$/);
    expect(mails[0]!.text.split("\n")[0]).toBe("Hello Lady Ada,");
  });

  it("is recorded as a queued notification naming its template and its outbox row", async () => {
    const { userId, holder } = await importedWithoutMail();
    await requestNewCode(deps(), holder, "email");
    const queued = (await eventsOf(t, "user", userId)).filter((event) => event.type === "user.notification.queued");
    expect(queued).toHaveLength(1);
    const payload = queued[0]!.payload;
    expect(payload.template).toBe("user.verification");
    const outboxIds = (await deps().store.listOutbox({ limit: 10_000 })).filter((row) => row.userId === userId).map((row) => row.id);
    expect(outboxIds).toEqual([payload.outboxId]);
  });
});

describe("a new code whose commit fails", () => {
  it("for a reason other than a concurrent request gives that reason, not code.resend_limited", async () => {
    const { holder } = await importedWithoutMail();
    const real = deps();
    const syncFailed = new DomainError("unavailable", "store.sync_failed", "the database could not be made durable");
    const store = new Proxy(real.store, {
      get(target, property, receiver) {
        if (property === "commit") return () => Promise.reject(syncFailed);
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const error = await requestNewCode({ ...real, store }, holder, "email").then(() => expect.fail("the commit failed"), (e: unknown) => e);
    expect(error).toBe(syncFailed);
  });
});
