import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { emailCodeIn, lastMailTo } from "../support/outbox.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/** Deactivate / reactivate / lock / unlock (issue 16): tokens refused at once, restored after, one event each. */
const t = useTestServer();
let defaultOrg: string;
let n = 0;

const admin = (protocol: Protocol = "connect-json-http1") => t.clients.client(UserService, protocol, { token: t.server.adminToken });
const newActor = (roles: string[] = []) => createActor(t.clients, t.server.adminToken, defaultOrg, `lifecycle-${++n}`, roles);
const stateOf = async (userId: string) => (await admin().getUser({ userId })).user?.state;
/** What the user's own token gets on `protocol`: ok, or the error's code and reason. */
async function ownCall(actor: Actor, protocol: Protocol) {
  try {
    await t.clients.client(UserService, protocol, { token: actor.token }).listPersonalAccessTokens({ userId: actor.userId });
    return "ok";
  } catch (error) {
    const { code, reason } = await failure(Promise.reject(error));
    return { code, reason };
  }
}
const refusedOnEveryProtocol = async (actor: Actor, reason: string) => {
  for (const each of PROTOCOLS) expect(await ownCall(actor, each)).toEqual({ code: Code.Unauthenticated, reason });
};
const acceptedOnEveryProtocol = async (actor: Actor) => {
  for (const each of PROTOCOLS) expect(await ownCall(actor, each)).toBe("ok");
};
const eventTypesOf = async (userId: string) =>
  (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateType: "user", aggregateId: userId, pageSize: 100 })).events.map(
    (event) => event.eventType,
  );

beforeAll(async () => {
  defaultOrg = (await admin().listUsers({ userName: "admin" })).users[0]!.details!.resourceOwner;
});

describe.each(PROTOCOLS)("user state over %s", (protocol) => {
  it("a deactivated user's token is refused on the very next call (user.inactive), and works again once reactivated", async () => {
    const actor = await newActor();
    await acceptedOnEveryProtocol(actor);
    const deactivated = await admin(protocol).deactivateUser({ userId: actor.userId });
    expect(deactivated.details?.resourceOwner).toBe(defaultOrg);
    await refusedOnEveryProtocol(actor, "user.inactive");
    expect(await stateOf(actor.userId)).toBe(UserState.INACTIVE);
    const listed = await admin(protocol).listUsers({ userName: `lifecycle-${n}` });
    expect(listed.users.map((user) => user.state)).toEqual([UserState.INACTIVE]);

    const reactivated = await admin(protocol).reactivateUser({ userId: actor.userId });
    expect(reactivated.details!.sequence).toBeGreaterThan(deactivated.details!.sequence);
    await acceptedOnEveryProtocol(actor);
    expect(await stateOf(actor.userId)).toBe(UserState.ACTIVE);
    expect((await eventTypesOf(actor.userId)).slice(-2)).toEqual(["user.deactivated", "user.reactivated"]);
  });

  it("a locked user's token is refused (user.locked) until it is unlocked", async () => {
    const actor = await newActor();
    await admin(protocol).lockUser({ userId: actor.userId });
    await refusedOnEveryProtocol(actor, "user.locked");
    expect(await stateOf(actor.userId)).toBe(UserState.LOCKED);
    await admin(protocol).unlockUser({ userId: actor.userId });
    await acceptedOnEveryProtocol(actor);
    expect(await stateOf(actor.userId)).toBe(UserState.ACTIVE);
    expect((await eventTypesOf(actor.userId)).slice(-2)).toEqual(["user.locked", "user.unlocked"]);
  });

  it("answers a repeated change with failed_precondition and a stable reason, appending nothing", async () => {
    const actor = await newActor();
    const users = admin(protocol);
    expect(await failure(users.reactivateUser({ userId: actor.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_inactive" });
    expect(await failure(users.unlockUser({ userId: actor.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.not_locked" });
    await users.deactivateUser({ userId: actor.userId });
    await users.lockUser({ userId: actor.userId });
    const events = await eventTypesOf(actor.userId);
    expect(await failure(users.deactivateUser({ userId: actor.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.already_inactive" });
    expect(await failure(users.lockUser({ userId: actor.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.already_locked" });
    expect(await eventTypesOf(actor.userId)).toEqual(events);
  });

  it("keeps a lock apart from deactivation: reactivating a locked user leaves it locked", async () => {
    const actor = await newActor();
    const users = admin(protocol);
    await users.lockUser({ userId: actor.userId });
    await users.deactivateUser({ userId: actor.userId });
    expect(await stateOf(actor.userId)).toBe(UserState.INACTIVE);
    await refusedOnEveryProtocol(actor, "user.inactive");
    await users.reactivateUser({ userId: actor.userId });
    expect(await stateOf(actor.userId)).toBe(UserState.LOCKED);
    await refusedOnEveryProtocol(actor, "user.locked");
    await users.unlockUser({ userId: actor.userId });
    await acceptedOnEveryProtocol(actor);
  });

  it("refuses a caller deactivating or locking itself (user.self)", async () => {
    const owner = await newActor(["ORG_OWNER"]);
    const own = t.clients.client(UserService, protocol, { token: owner.token });
    expect(await failure(own.deactivateUser({ userId: owner.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.self" });
    expect(await failure(own.lockUser({ userId: owner.userId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "user.self" });
    await acceptedOnEveryProtocol(owner);
  });
});

describe("reactivation restores what was", () => {
  it("a user deactivated before its initialization is INITIAL again", async () => {
    const userName = `lifecycle-initial-${++n}`;
    const { userId } = await admin().createHumanUser({ userName, profile: { firstName: "In", lastName: "Itial" }, email: { email: `${userName}@example.com` } });
    expect(await stateOf(userId)).toBe(UserState.INITIAL);
    await admin("grpc-h2c").deactivateUser({ userId });
    expect(await stateOf(userId)).toBe(UserState.INACTIVE);
    await admin("grpc-h2c").reactivateUser({ userId });
    expect(await stateOf(userId)).toBe(UserState.INITIAL);
  });

  it("an email verified while inactive completes the initialization, but the user stays inactive until reactivated", async () => {
    const userName = `lifecycle-verify-${++n}`;
    const email = `${userName}@example.com`;
    const { userId } = await admin().createHumanUser({ userName, profile: { firstName: "Ve", lastName: "Rify" }, email: { email }, password: "Secr3t!pass" });
    expect(await stateOf(userId)).toBe(UserState.INITIAL);
    await admin().deactivateUser({ userId });
    const code = emailCodeIn((await lastMailTo(t.server, email))!);
    await admin("grpc-web-http1").verifyEmail({ userId, verificationCode: code! });
    expect(await stateOf(userId)).toBe(UserState.INACTIVE);
    await admin().reactivateUser({ userId });
    expect(await stateOf(userId)).toBe(UserState.ACTIVE);
  });
});

describe("who may change a user's state", () => {
  it("a user manager may deactivate a plain user, but not an organization owner (the privilege ceiling)", async () => {
    const manager = await newActor(["ORG_USER_MANAGER"]);
    const [plain, owner] = [await newActor(), await newActor(["ORG_OWNER"])];
    const users = t.clients.client(UserService, "connect-proto-h2c", { token: manager.token });
    await users.deactivateUser({ userId: plain.userId });
    for (const call of [() => users.deactivateUser({ userId: owner.userId }), () => users.lockUser({ userId: owner.userId })]) {
      expect(await failure(call())).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
    }
    await acceptedOnEveryProtocol(owner);
  });

  it("a user without user.write is denied, the same for an existing and an unknown id; an authorized caller gets not_found for an unknown id", async () => {
    const nobody = await newActor();
    const target = await newActor();
    const users = t.clients.client(UserService, "grpc-web-http1", { token: nobody.token });
    const existing = await failure(users.lockUser({ userId: target.userId }));
    expect(existing).toMatchObject({ code: Code.PermissionDenied });
    expect(await failure(users.lockUser({ userId: `${target.userId.slice(0, -4)}0000` }))).toEqual(existing);
    await acceptedOnEveryProtocol(target);
    expect(await failure(admin().lockUser({ userId: "no-such-user" }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
  });
});
