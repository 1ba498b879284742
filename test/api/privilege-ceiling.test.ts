import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * The privilege ceiling (API.md, issue 9): nobody may act on the credentials or identity of a
 * principal that holds more than itself. The escalation this closes: a user manager lists the users,
 * mints a token for the bootstrap admin (IAM_OWNER) and then owns the instance.
 */
const t = useTestServer();
let defaultOrg: string;
let otherOrg: string;
let adminId: string;
let userManager: Actor;
let orgOwner: Actor;
let peerManager: Actor;
let plain: Actor;
let ownerElsewhere: Actor;

const admin = (orgId?: string) => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, ...(orgId ? { orgId } : {}) });

beforeAll(async () => {
  const { users } = await admin().listUsers({ userName: "admin" });
  adminId = users[0]!.userId;
  defaultOrg = users[0]!.details!.resourceOwner;
  ({ organizationId: otherOrg } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Elsewhere" }));
  userManager = await createActor(t.clients, t.server.adminToken, defaultOrg, "ceiling-manager", ["ORG_USER_MANAGER"]);
  peerManager = await createActor(t.clients, t.server.adminToken, defaultOrg, "ceiling-peer-manager", ["ORG_USER_MANAGER"]);
  orgOwner = await createActor(t.clients, t.server.adminToken, defaultOrg, "ceiling-owner", ["ORG_OWNER"]);
  plain = await createActor(t.clients, t.server.adminToken, defaultOrg, "ceiling-plain");
  // A user of the default organization who owns ANOTHER organization: more than an owner of the default one holds.
  ownerElsewhere = await createActor(t.clients, t.server.adminToken, defaultOrg, "ceiling-owner-elsewhere");
  await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId: otherOrg }).addOrganizationMember({ userId: ownerElsewhere.userId, roles: ["ORG_OWNER"] });
});

describe.each(PROTOCOLS)("the privilege ceiling over %s", (protocol) => {
  const as = (actor: Actor) => t.clients.client(UserService, protocol, { token: actor.token });

  it("a user manager sees the admin in ListUsers but cannot mint, list or revoke its tokens", async () => {
    const { users } = await as(userManager).listUsers({ userName: "admin" });
    expect(users.map((u) => u.userId)).toEqual([adminId]);
    const denied = { code: Code.PermissionDenied, reason: "principal.privileged" };
    const minted = await failure(as(userManager).addPersonalAccessToken({ userId: adminId }));
    expect(minted).toMatchObject({ ...denied, metadata: { scope: "instance" } });
    expect(minted.metadata["permission"]).toMatch(/^(iam|org|user|events|project)\./);
    expect(await failure(as(userManager).listPersonalAccessTokens({ userId: adminId }))).toMatchObject(denied);
    const adminTokenId = t.server.adminToken.split(".")[1]!;
    expect(await failure(as(userManager).removePersonalAccessToken({ userId: adminId, tokenId: adminTokenId }))).toMatchObject(denied);
  });

  it("an organization owner cannot take over the instance owner either, and the SMTP configuration stays out of reach", async () => {
    expect(await failure(as(orgOwner).addPersonalAccessToken({ userId: adminId }))).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
    expect(await failure(t.clients.client(SmtpService, protocol, { token: orgOwner.token }).getSmtpConfig({}))).toMatchObject({ code: Code.PermissionDenied });
  });

  it("a user manager cannot act on an organization owner, but may on a user without roles and on a peer holding the same", async () => {
    expect(await failure(as(userManager).addPersonalAccessToken({ userId: orgOwner.userId }))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "principal.privileged",
      metadata: { scope: "org" },
    });
    await expect(as(userManager).addPersonalAccessToken({ userId: plain.userId })).resolves.toMatchObject({ tokenId: expect.any(String) });
    await expect(as(userManager).addPersonalAccessToken({ userId: peerManager.userId })).resolves.toMatchObject({ tokenId: expect.any(String) });
  });

  it("an owner of this organization cannot act on a user who owns another organization; the instance owner can", async () => {
    expect(await failure(as(orgOwner).addPersonalAccessToken({ userId: ownerElsewhere.userId }))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "principal.privileged",
      metadata: { scope: "org" },
    });
    await expect(t.clients.client(UserService, protocol, { token: t.server.adminToken }).addPersonalAccessToken({ userId: ownerElsewhere.userId })).resolves.toBeDefined();
  });
});

describe("the privilege ceiling on email credentials", () => {
  let privilegedHuman: string;

  beforeAll(async () => {
    ({ userId: privilegedHuman } = await admin().createHumanUser({
      userName: "ceiling-human-owner",
      profile: { firstName: "Olga", lastName: "Owner" },
      email: { email: "olga@example.com" },
      password: "Sup3r-secret!",
    }));
    await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).addOrganizationMember({ userId: privilegedHuman, roles: ["ORG_OWNER"] });
  });

  it("SetEmail on a more privileged user is denied and changes nothing", async () => {
    const manager = t.clients.client(UserService, "grpc-h2c", { token: userManager.token });
    expect(await failure(manager.setEmail({ userId: privilegedHuman, email: "attacker@example.com", isVerified: true }))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "principal.privileged",
    });
    const { user } = await admin().getUser({ userId: privilegedHuman });
    expect(user?.type).toMatchObject({ case: "human", value: { email: { email: "olga@example.com" } } });
  });

  it("ResendEmailCode may mail the user a new code, but hands it to the caller only within the ceiling", async () => {
    const manager = t.clients.client(UserService, "grpc-web-http1", { token: userManager.token });
    expect(await failure(manager.resendEmailCode({ userId: privilegedHuman, returnCode: true }))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "principal.privileged",
    });
    const mailed = await manager.resendEmailCode({ userId: privilegedHuman, returnCode: false });
    expect(mailed.verificationCode).toBeUndefined();
    const owned = await admin().resendEmailCode({ userId: privilegedHuman, returnCode: true });
    expect(owned.verificationCode).toMatch(/^[A-Z0-9]{6}$/);
  });
});

describe("tokens issued below a later role", () => {
  it("a token a user manager minted for a user without roles is revoked when that user is made an owner; the user's own and the admin's tokens stay", async () => {
    const bot = await createActor(t.clients, t.server.adminToken, defaultOrg, "ceiling-promoted");
    const minted = await t.clients.client(UserService, "grpc-h2c", { token: userManager.token }).addPersonalAccessToken({ userId: bot.userId });
    const own = await t.clients.client(UserService, "grpc-h2c", { token: bot.token }).listPersonalAccessTokens({ userId: bot.userId });
    const byIssuer = new Map(own.tokens.map((token) => [token.tokenId, token.issuerId]));
    expect(byIssuer.get(minted.tokenId)).toBe(userManager.userId);
    expect(byIssuer.get(bot.token.split(".")[1]!)).toBe(adminId);

    // A role the manager holds itself keeps its token.
    await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).addOrganizationMember({ userId: bot.userId, roles: ["ORG_USER_MANAGER"] });
    await t.clients.client(UserService, "connect-proto-h2c", { token: minted.token }).listPersonalAccessTokens({ userId: bot.userId });

    // A role beyond the manager revokes it at once: the manager does not become an owner through it.
    await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId: otherOrg }).addOrganizationMember({ userId: bot.userId, roles: ["ORG_OWNER"] });
    for (const protocol of PROTOCOLS) {
      expect(await failure(t.clients.client(UserService, protocol, { token: minted.token }).listPersonalAccessTokens({ userId: bot.userId }))).toMatchObject({ code: Code.Unauthenticated });
    }
    const after = await admin().listPersonalAccessTokens({ userId: bot.userId });
    expect(after.tokens.map((token) => token.tokenId)).toEqual([bot.token.split(".")[1]]);
    const { events } = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateId: bot.userId });
    expect(events.filter((event) => event.eventType === "user.pat.removed").map((event) => event.payload)).toEqual([
      { tokenId: minted.tokenId, reason: "issuer_below_new_role", issuerUserId: userManager.userId },
    ]);
  });
});
