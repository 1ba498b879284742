import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { removeUser } from "../../src/commands/user-lifecycle.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { eventually } from "../support/eventually.js";
import { TestClock, useTestServer } from "../support/server.js";
import { startSmtpServer, type TestSmtpServer } from "../support/smtp.js";
import { createActor } from "../support/world.js";
import { adminCaller, busyDeps, interleavedDeps, typed } from "./rules-support.js";

/**
 * user.proto: RemoveUser cancels the mails still waiting for the user (each a notification.cancelled),
 * not the ones delivered already; a removal that loses a race answers as the call after it would
 * (user.not_found, or member.last_owner when it would take the instance's last IAM_OWNER), else aborted;
 * a store failure reaches the caller as it is. Only deactivating, locking and removing oneself are
 * refused as user.self: reactivating or unlocking oneself answers what it answers for anyone.
 */
const t = useTestServer({ clock: new TestClock(new Date(), true), config: { mail: { smtpTimeoutMs: 2_000, pollMs: 50, maxAttempts: 2, retryBaseMs: 100 } } });
let orgId: string;
let caller: Caller;
let userCount = 0;
let relay: TestSmtpServer | undefined;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Remove user rules" }));
  caller = await adminCaller(t, orgId);
});
afterAll(async () => {
  await relay?.close();
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
const instanceMembers = () => t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken });
const eventsOf = async (aggregateType: string, aggregateId: string) =>
  (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateType, aggregateId, pageSize: 1000 })).events;

async function newUser(): Promise<string> {
  userCount += 1;
  return (await users().createMachineUser({ userName: `remove-rules-${userCount}`, name: "Leaver" })).userId;
}

describe("RemoveUser and the user's mails", () => {
  it("cancels the mail still waiting (notification.cancelled), not the one delivered already", async () => {
    relay = await startSmtpServer({ tls: "none" });
    const smtp = t.clients.client(SmtpService, "connect-json-http1", { token: t.server.adminToken });
    await smtp.createSmtpConfig({ senderAddress: "noreply@remove-rules.example.com", senderName: "Rules", tls: false, host: `127.0.0.1:${relay.port}`, user: "" });
    const { userId } = await users().createHumanUser({ userName: "mail-leaver", profile: { firstName: "Mai", lastName: "Ler" }, email: { email: "mail-leaver@example.com" }, password: "Sup3r-secret!" });
    const queuedIds = async () => (await eventsOf("user", userId)).filter((e) => e.eventType === "user.notification.queued").map((e) => String(e.payload?.["outboxId"]));
    const [delivered] = await queuedIds();
    await eventually(async () => (await eventsOf("notification", delivered!)).some((e) => e.eventType === "notification.sent"), { what: "the first mail to be sent", timeoutMs: 15_000 });
    // Without an SMTP configuration the next mail waits.
    await smtp.removeSmtpConfig({});
    await users().setEmail({ userId, email: "mail-leaver.new@example.com" });
    const waiting = (await queuedIds()).find((id) => id !== delivered);
    expect(waiting).toBeDefined();

    await users().removeUser({ userId });

    expect((await eventsOf("notification", waiting!)).map((e) => e.eventType)).toContain("notification.cancelled");
    expect((await eventsOf("notification", delivered!)).map((e) => e.eventType)).not.toContain("notification.cancelled");
  });
});

describe("user removals that lose a race", () => {
  it("a removal that finds an instance membership of the user removed since its reads is aborted (not last_owner), and the user stays", async () => {
    const userId = await newUser();
    await instanceMembers().addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] });
    const deps = interleavedDeps(t, () => instanceMembers().removeInstanceMember({ userId }));
    const error = await removeUser(deps, caller, userId).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    expect((await users().getUser({ userId })).user?.state).toBe(UserState.ACTIVE);
  });

  it("a removal that finds an organization membership of the user removed since its reads is aborted (not last_owner)", async () => {
    const userId = await newUser();
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
    await orgs.addOrganizationMember({ userId, roles: ["ORG_USER_MANAGER"] });
    const deps = interleavedDeps(t, () => orgs.removeOrganizationMember({ userId }));
    const error = await removeUser(deps, caller, userId).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    expect((await users().getUser({ userId })).user?.state).toBe(UserState.ACTIVE);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), not user.not_found, even when another writer removed the user meanwhile", async () => {
    const userId = await newUser();
    const deps = busyDeps(t, () => users().removeUser({ userId }));
    const error = await removeUser(deps, caller, userId).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });
});

describe("acting on oneself", () => {
  it("reactivating or unlocking oneself is not refused as user.self: an active user gets user.not_inactive and user.not_locked, as for anyone", async () => {
    userCount += 1;
    const manager = await createActor(t.clients, t.server.adminToken, orgId, `self-manager-${userCount}`, ["ORG_USER_MANAGER"]);
    const asSelf = t.clients.client(UserService, "connect-json-http1", { token: manager.token, orgId });
    expect(await failure(asSelf.reactivateUser({ userId: manager.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_inactive" });
    expect(await failure(asSelf.unlockUser({ userId: manager.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_locked" });
    expect(await failure(asSelf.lockUser({ userId: manager.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.self" });
  });
});

/** Its own server: the bootstrap admin loses IAM_OWNER here, which the tests above must not see. */
describe("RemoveUser keeps the instance's last IAM_OWNER", () => {
  const own = useTestServer();

  it("a removal that finds the other owner gone since its reads is member.last_owner naming the role, and the user stays", async () => {
    const ownCaller = await adminCaller(own);
    const orgOf = ownCaller.principal.orgId;
    const owner = await createActor(own.clients, own.server.adminToken, orgOf, "last-owner");
    await own.clients.client(InstanceService, "connect-json-http1", { token: own.server.adminToken }).addInstanceMember({ userId: owner.userId, roles: ["IAM_OWNER"] });
    const asOwner = own.clients.client(InstanceService, "connect-json-http1", { token: owner.token });
    const deps = interleavedDeps(own, () => asOwner.removeInstanceMember({ userId: ownCaller.principal.userId }));

    const error = await removeUser(deps, ownCaller, owner.userId).catch((e: unknown) => e);

    expect(typed(error as never)).toEqual({ kind: "failed_precondition", reason: "member.last_owner", metadata: { role: "IAM_OWNER" } });
    const asOwnerUsers = own.clients.client(UserService, "connect-json-http1", { token: owner.token, orgId: orgOf });
    expect((await asOwnerUsers.getUser({ userId: owner.userId })).user?.state).toBe(UserState.ACTIVE);
    expect((await asOwner.listInstanceMembers({})).members.map((m) => [m.userId, m.roles])).toEqual([[owner.userId, ["IAM_OWNER"]]]);
  });
});
