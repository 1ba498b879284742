import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { Gender, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { AuditTrail, expectExactly, idIn, instanceIdOf, instanceOwner, orgWithOwner, type TrailEntry, trailEntry, type Written } from "../support/audit-trail.js";
import { type Protocol, PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { eventually } from "../support/eventually.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/*
 * The user events of the catalogue at Event.payload (proto/gatehouse/admin/v1/event.proto), each
 * caused by a real call and read back through ListEvents filtered to the aggregate it is about.
 * No SMTP configuration is ever saved on this server, so queued mails stay pending (copied to the
 * data directory), which RemoveUser then cancels.
 */
const t = useTestServer();
const trail = () => new AuditTrail(t.clients, t.server.adminToken);
const protocolOf = (i: number): Protocol => PROTOCOLS[i % PROTOCOLS.length]!;
const users = (protocol: Protocol, token: string, orgId?: string) => t.clients.client(UserService, protocol, { token, ...(orgId ? { orgId } : {}) });
const userTrail = (userId: string) => ({ aggregateType: "user", aggregateId: userId });

/** A Gatehouse id, never empty. */
const anId = expect.stringMatching(/^\S+$/);
const HOUR = 3_600_000;
/** The RFC 3339 time `ms` after the write answered by `details` (its events' time). */
const after = (details: { changeDate?: Parameters<typeof timestampDate>[0] } | undefined, ms: number) =>
  new Date(timestampDate(details!.changeDate!).getTime() + ms).toISOString();

const profile = { firstName: "Ada", lastName: "Lovelace", nickName: "", displayName: "", preferredLanguage: "", gender: Gender.UNSPECIFIED };
const profilePayload = { ...profile, displayName: "Ada Lovelace", gender: 0 };

describe("audit trail: machine users and personal access tokens", () => {
  it("user.machine.added carries user name, name and description, owned by the organization, caused by the caller", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-machine");
    const { response, events } = await trail().record(
      () => users("grpc-h2c", owner.token, orgId).createMachineUser({ userName: "trail-machine-bot", name: "Deploy bot", description: "Ships releases" }),
      (r) => userTrail(r.userId),
    );
    expect(events).toEqual<TrailEntry[]>([
      {
        type: "user.machine.added",
        aggregateType: "user",
        aggregateId: response.userId,
        resourceOwner: orgId,
        actor: owner.userId,
        payload: { userName: "trail-machine-bot", name: "Deploy bot", description: "Ships releases" },
      },
    ]);
  });

  it("user.pat.added carries the token id and the expiration (null for none), user.pat.removed the token id; never the token", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-pat");
    const client = users("connect-proto-h2c", owner.token, orgId);
    const { userId } = await client.createMachineUser({ userName: "trail-pat-bot", name: "Bot" });
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "user", aggregateId: userId, resourceOwner: orgId, actor: owner.userId, payload });

    const forever = await trail().record(() => client.addPersonalAccessToken({ userId }), userTrail(userId));
    expect(forever.events).toEqual([entry("user.pat.added", { tokenId: forever.response.tokenId, expirationDate: null })]);

    const expiration = new Date(timestampDate(forever.response.details!.changeDate!).getTime() + 30 * 24 * HOUR);
    const expiring = await trail().record(() => client.addPersonalAccessToken({ userId, expirationDate: timestampFromDate(expiration) }), userTrail(userId));
    expect(expiring.events).toEqual([entry("user.pat.added", { tokenId: expiring.response.tokenId, expirationDate: expiration.toISOString() })]);

    const removed = await trail().record(() => client.removePersonalAccessToken({ userId, tokenId: forever.response.tokenId }), userTrail(userId));
    expect(removed.events).toEqual([entry("user.pat.removed", { tokenId: forever.response.tokenId })]);

    const text = JSON.stringify([...forever.events, ...expiring.events]);
    for (const { token } of [forever.response, expiring.response]) expect(text).not.toContain(token.split(".")[2]);
  });

  it("user.pat.removed names the reason and the issuer when granting a role revoked a token its issuer could not grant that role with", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-revoke");
    const manager = await createActor(t.clients, t.server.adminToken, orgId, "trail-revoke-manager", ["ORG_USER_MANAGER"]);
    const { userId } = await users("connect-json-http1", owner.token, orgId).createMachineUser({ userName: "trail-revoke-bot", name: "Bot" });
    const { tokenId } = await users("connect-json-http1", manager.token, orgId).addPersonalAccessToken({ userId });

    const orgs = t.clients.client(OrganizationService, "grpc-web-http1", { token: owner.token, orgId });
    const mark = await trail().mark();
    const { details } = await orgs.addOrganizationMember({ userId, roles: ["ORG_OWNER"] });
    expect(await trail().since(mark, userTrail(userId), details!.sequence)).toEqual<TrailEntry[]>([
      {
        type: "user.pat.removed",
        aggregateType: "user",
        aggregateId: userId,
        resourceOwner: orgId,
        actor: owner.userId,
        payload: { tokenId, reason: "issuer_below_new_role", issuerUserId: manager.userId },
      },
    ]);
    expect(await trail().since(mark, { aggregateType: "member" }, details!.sequence)).toEqual([
      expect.objectContaining({ type: "org.member.added", payload: { userId, roles: ["ORG_OWNER"], level: "org", scopeId: orgId } }),
    ]);
  });
});

describe("audit trail: creating human users", () => {
  it("a password that is set is `set`; an unverified email queues user.initialization with an email code; the phone is E.164 with its verified flag", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-human-set");
    const { response, events } = await trail().record(
      () =>
        users("connect-json-http1", owner.token, orgId).createHumanUser({
          userName: "trail-ada",
          profile: { firstName: "Ada", lastName: "Lovelace", nickName: "Countess", displayName: "A. Lovelace", preferredLanguage: "en-GB", gender: Gender.FEMALE },
          email: { email: "ada@example.com" },
          phone: { phone: "+41 44 668 18 00", isPhoneVerified: true },
          password: "Analytical-Engine-1843",
          passwordChangeRequired: true,
        }),
      (r) => userTrail(r.userId),
    );
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "user", aggregateId: response.userId, resourceOwner: orgId, actor: owner.userId, payload });
    expectExactly(events, [
      entry("user.human.added", {
        userName: "trail-ada",
        profile: { firstName: "Ada", lastName: "Lovelace", nickName: "Countess", displayName: "A. Lovelace", preferredLanguage: "en-GB", gender: Gender.FEMALE },
        email: "ada@example.com",
        emailVerified: false,
        phone: "+41446681800",
        phoneVerified: true,
        password: "set",
        passwordChangeRequired: true,
        otpConfigured: false,
        idpLinks: [],
        state: "initial",
      }),
      entry("user.code.added", { kind: "email", codeId: anId, expiresAt: after(response.details, HOUR) }),
      entry("user.notification.queued", { template: "user.initialization", outboxId: anId }),
    ]);
    expect(JSON.stringify(events)).not.toContain("Analytical-Engine-1843");
  });

  it("an imported hash is `imported:<scheme>`; a verified email starts the user active with no code and no mail; an unverified phone is false", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-human-import");
    const client = users("grpc-h2c", owner.token, orgId);
    const imports = [
      ["bcrypt", "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"],
      ["argon2", "$argon2id$v=19$m=1024,t=2,p=1$j9HaO6d0bm0tJYRwDuE8pw$7cyIyG6FY5rl8Y7VsS4eUQ"],
    ] as const;
    for (const [scheme, value] of imports) {
      const userName = `trail-import-${scheme}`;
      const { response, events } = await trail().record(
        () => client.createHumanUser({ userName, profile, email: { email: `${userName}@example.com`, isEmailVerified: true }, phone: { phone: "+41446681800" }, hashedPassword: { value } }),
        (r) => userTrail(r.userId),
      );
      expect(events).toEqual<TrailEntry[]>([
        {
          type: "user.human.added",
          aggregateType: "user",
          aggregateId: response.userId,
          resourceOwner: orgId,
          actor: owner.userId,
          payload: {
            userName,
            profile: profilePayload,
            email: `${userName}@example.com`,
            emailVerified: true,
            phone: "+41446681800",
            phoneVerified: false,
            password: `imported:${scheme}`,
            passwordChangeRequired: false,
            otpConfigured: false,
            idpLinks: [],
            state: "active",
          },
        },
      ]);
      expect(JSON.stringify(events)).not.toContain(value);
    }
  });

  it("no password is `none` and no phone is null: an initialization mail with an email code and an init code (valid 72 hours)", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-human-none");
    const { response, events } = await trail().record(
      () => users("grpc-web-http1", owner.token, orgId).createHumanUser({ userName: "trail-none", profile, email: { email: "none@example.com" } }),
      (r) => userTrail(r.userId),
    );
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "user", aggregateId: response.userId, resourceOwner: orgId, actor: owner.userId, payload });
    expectExactly(events, [
      entry("user.human.added", {
        userName: "trail-none",
        profile: profilePayload,
        email: "none@example.com",
        emailVerified: false,
        phone: null,
        phoneVerified: null,
        password: "none",
        passwordChangeRequired: false,
        otpConfigured: false,
        idpLinks: [],
        state: "initial",
      }),
      entry("user.code.added", { kind: "email", codeId: anId, expiresAt: after(response.details, HOUR) }),
      entry("user.code.added", { kind: "init", codeId: anId, expiresAt: after(response.details, 72 * HOUR) }),
      entry("user.notification.queued", { template: "user.initialization", outboxId: anId }),
    ]);
  });

  it("IDP links are listed by config and external id; with an unverified email the user is active and gets user.verification", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-human-idp");
    const { idpId } = await t.clients
      .client(IdentityProviderService, "connect-json-http1", { token: owner.token, orgId })
      .createIdentityProvider({ name: "Trail SSO", issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "idp-secret" });
    const { response, events } = await trail().record(
      () =>
        users("connect-proto-h2c", owner.token, orgId).createHumanUser({
          userName: "trail-linked",
          profile,
          email: { email: "linked@example.com" },
          idps: [{ configId: idpId, externalUserId: "ext-4711", displayName: "Ada at SSO" }],
        }),
      (r) => userTrail(r.userId),
    );
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "user", aggregateId: response.userId, resourceOwner: orgId, actor: owner.userId, payload });
    expectExactly(events, [
      entry("user.human.added", {
        userName: "trail-linked",
        profile: profilePayload,
        email: "linked@example.com",
        emailVerified: false,
        phone: null,
        phoneVerified: null,
        password: "none",
        passwordChangeRequired: false,
        otpConfigured: false,
        idpLinks: [{ configId: idpId, externalUserId: "ext-4711" }],
        state: "active",
      }),
      entry("user.code.added", { kind: "email", codeId: anId, expiresAt: after(response.details, HOUR) }),
      entry("user.notification.queued", { template: "user.verification", outboxId: anId }),
    ]);
  });

  it("an imported OTP secret is only `otpConfigured: true`; passwordless registration adds a passwordless code, the one in the link", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-human-passkey");
    const secret = "JBSWY3DPEHPK3PXPJBSWY3DP";
    const { response, events } = await trail().record(
      () =>
        users("grpc-h2c", owner.token, orgId).createHumanUser({
          userName: "trail-passkey",
          profile,
          email: { email: "passkey@example.com", isEmailVerified: true },
          requestPasswordlessRegistration: true,
          otpCode: secret,
        }),
      (r) => userTrail(r.userId),
    );
    const codeId = new URL(response.passwordlessRegistration!.link).searchParams.get("codeID");
    const code = new URL(response.passwordlessRegistration!.link).searchParams.get("code");
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "user", aggregateId: response.userId, resourceOwner: orgId, actor: owner.userId, payload });
    expectExactly(events, [
      entry("user.human.added", {
        userName: "trail-passkey",
        profile: profilePayload,
        email: "passkey@example.com",
        emailVerified: true,
        phone: null,
        phoneVerified: null,
        password: "none",
        passwordChangeRequired: false,
        otpConfigured: true,
        idpLinks: [],
        state: "active",
      }),
      entry("user.code.added", { kind: "passwordless", codeId, expiresAt: after(response.details, HOUR) }),
    ]);
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(JSON.stringify(events)).not.toContain(code);
  });

  it("user.human.added's profile holds the Profile fields and nothing else (no protobuf internals such as $typeName)", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-human-profile");
    const { events } = await trail().record(
      () => users("connect-json-http1", owner.token, orgId).createHumanUser({ userName: "trail-profile", profile, email: { email: "profile@example.com", isEmailVerified: true }, password: "Sup3r-secret!" }),
      (r) => userTrail(r.userId),
    );
    expect(events.map((event) => event.payload?.profile)).toEqual([profilePayload]);
  });
});

describe("audit trail: email and its verification", () => {
  /** A human user with a verified email (no code pending, no mail), for the email calls to act on. */
  async function verifiedHuman(name: string) {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, name);
    const { userId } = await users("connect-json-http1", owner.token, orgId).createHumanUser({
      userName: name,
      profile,
      email: { email: `${name}@example.com`, isEmailVerified: true },
      password: "Sup3r-secret!",
    });
    const entry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "user", aggregateId: userId, resourceOwner: orgId, actor: owner.userId, payload });
    return { orgId, owner, userId, entry };
  }

  it("user.email.changed carries the address as stored and whether it is verified; an unverified one gets a code and user.verification", async () => {
    const { owner, orgId, userId, entry } = await verifiedHuman("trail-set-email");
    const client = users("grpc-web-http1", owner.token, orgId);

    const verified = await trail().record(() => client.setEmail({ userId, email: "  verified@example.com ", isVerified: true }), userTrail(userId));
    expect(verified.events).toEqual([entry("user.email.changed", { email: "verified@example.com", verified: true })]);

    const mailed = await trail().record(() => client.setEmail({ userId, email: "mailed@example.com" }), userTrail(userId));
    expectExactly(mailed.events, [
      entry("user.email.changed", { email: "mailed@example.com", verified: false }),
      entry("user.code.added", { kind: "email", codeId: anId, expiresAt: after(mailed.response.details, HOUR) }),
      entry("user.notification.queued", { template: "user.verification", outboxId: anId }),
    ]);

    // With return_code the code is answered instead of mailed: nothing is queued.
    const returned = await trail().record(() => client.setEmail({ userId, email: "returned@example.com", returnCode: true }), userTrail(userId));
    expectExactly(returned.events, [
      entry("user.email.changed", { email: "returned@example.com", verified: false }),
      entry("user.code.added", { kind: "email", codeId: anId, expiresAt: after(returned.response.details, HOUR) }),
    ]);
    expect(JSON.stringify(returned.events)).not.toContain(returned.response.verificationCode!);
  });

  it("ResendEmailCode appends a new email code and queues user.verification, or only the code with return_code", async () => {
    const { owner, orgId, userId, entry } = await verifiedHuman("trail-resend");
    const client = users("connect-json-http1", owner.token, orgId);
    await client.setEmail({ userId, email: "resend@example.com", returnCode: true });

    const mailed = await trail().record(() => client.resendEmailCode({ userId }), userTrail(userId));
    expectExactly(mailed.events, [
      entry("user.code.added", { kind: "email", codeId: anId, expiresAt: after(mailed.response.details, HOUR) }),
      entry("user.notification.queued", { template: "user.verification", outboxId: anId }),
    ]);
    const returned = await trail().record(() => client.resendEmailCode({ userId, returnCode: true }), userTrail(userId));
    expect(returned.events).toEqual([entry("user.code.added", { kind: "email", codeId: anId, expiresAt: after(returned.response.details, HOUR) })]);
  });

  it("a wrong code is user.email.verification.failed with outcome invalid, the right one user.email.verified; both name the code's id", async () => {
    const { owner, orgId, userId, entry } = await verifiedHuman("trail-verify");
    const client = users("connect-proto-h2c", owner.token, orgId);
    const issued = await trail().record(() => client.setEmail({ userId, email: "verify-me@example.com", returnCode: true }), userTrail(userId));
    const codeId = idIn(issued.events, "user.code.added", "codeId");
    const code = issued.response.verificationCode!;
    const wrong = code === "AAAAAA" ? "BBBBBB" : "AAAAAA";

    const mark = await trail().mark();
    expect(await failure(client.verifyEmail({ userId, verificationCode: wrong }))).toMatchObject({ reason: "email_code.invalid" });
    expect(await trail().since(mark, userTrail(userId))).toEqual([entry("user.email.verification.failed", { outcome: "invalid", codeId })]);

    const verified = await trail().record(() => client.verifyEmail({ userId, verificationCode: code }), userTrail(userId));
    expect(verified.events).toEqual([entry("user.email.verified", { email: "verify-me@example.com", codeId })]);
    expect(JSON.stringify(verified.events)).not.toContain(code);
  });
});

describe("audit trail: user lifecycle", () => {
  it("user.deactivated, user.reactivated, user.locked and user.unlocked each carry an empty payload", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-lifecycle");
    const { userId } = await users("connect-json-http1", owner.token, orgId).createMachineUser({ userName: "trail-lifecycle-bot", name: "Bot" });
    const calls: [string, (p: Protocol) => Promise<Written>][] = [
      ["user.deactivated", (p: Protocol) => users(p, owner.token, orgId).deactivateUser({ userId })],
      ["user.reactivated", (p: Protocol) => users(p, owner.token, orgId).reactivateUser({ userId })],
      ["user.locked", (p: Protocol) => users(p, owner.token, orgId).lockUser({ userId })],
      ["user.unlocked", (p: Protocol) => users(p, owner.token, orgId).unlockUser({ userId })],
    ];
    for (const [i, [type, call]] of calls.entries()) {
      const { events } = await trail().record(() => call(protocolOf(i)), userTrail(userId), protocolOf(i + 1));
      expect(events, type).toEqual<TrailEntry[]>([{ type, aggregateType: "user", aggregateId: userId, resourceOwner: orgId, actor: owner.userId, payload: {} }]);
    }
  });

  it("a mail queued while no SMTP configuration exists is copied: notification.copied names the template and the .eml file", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-copied");
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const { response, events } = await trail().record(
      () => users("connect-json-http1", owner.token, orgId).createHumanUser({ userName: "trail-copied", profile, email: { email: "copied@example.com" }, password: "Sup3r-secret!" }),
      (r) => userTrail(r.userId),
    );
    const outboxId = idIn(events, "user.notification.queued", "outboxId");
    const copied = await eventually(async () => (await trail().all({ aggregateType: "notification", aggregateId: outboxId })).find((e) => e.eventType === "notification.copied"), {
      what: `notification.copied for ${outboxId}`,
    });
    const stamp = timestampDate(response.details!.changeDate!).toISOString().replace(/[:.]/g, "-");
    expect(trailEntry(copied)).toEqual<TrailEntry>({
      type: "notification.copied",
      aggregateType: "notification",
      aggregateId: outboxId,
      resourceOwner: instanceId,
      actor: "system",
      payload: { template: "user.initialization", file: join(t.server.dataDir, "mail", `${stamp}-${outboxId}.eml`) },
    });
  });

  it("user.removed lists user name, token ids, IDP links and mails; each membership goes with cause user.removed, each pending mail is notification.cancelled", async () => {
    const root = await instanceOwner(t.clients, t.server.adminToken, "trail-remove-root");
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const { organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: root.token }).createOrganization({ name: "trail-remove" });
    const { organizationId: partnerId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: root.token }).createOrganization({ name: "trail-remove-partner" });
    const asRoot = { token: root.token, orgId };
    const projects = t.clients.client(ProjectService, "connect-json-http1", asRoot);
    const { projectId } = await projects.createProject({ name: "trail-remove-project" });
    const { grantId } = await projects.createProjectGrant({ projectId, grantedOrganizationId: partnerId, roleKeys: [] });
    const { idpId } = await t.clients
      .client(IdentityProviderService, "connect-json-http1", asRoot)
      .createIdentityProvider({ name: "Remove SSO", issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "idp-secret" });
    const client = users("connect-json-http1", root.token, orgId);
    const created = await trail().record(
      () => client.createHumanUser({ userName: "trail-removed", profile, email: { email: "removed@example.com" }, idps: [{ configId: idpId, externalUserId: "ext-removed", displayName: "" }] }),
      (r) => userTrail(r.userId),
    );
    const userId = created.response.userId;
    const outboxId = idIn(created.events, "user.notification.queued", "outboxId");
    const { tokenId } = await client.addPersonalAccessToken({ userId });

    // One membership per level; each add names its member aggregate, which the removal must reuse.
    const memberships: { level: string; scopeId: string; owner: string; roles: string[]; add: () => Promise<Written> }[] = [
      { level: "instance", scopeId: instanceId, owner: instanceId, roles: ["IAM_OWNER_VIEWER"], add: () => t.clients.client(InstanceService, "connect-json-http1", { token: root.token }).addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] }) },
      { level: "org", scopeId: orgId, owner: orgId, roles: ["ORG_USER_MANAGER"], add: () => t.clients.client(OrganizationService, "connect-json-http1", asRoot).addOrganizationMember({ userId, roles: ["ORG_USER_MANAGER"] }) },
      { level: "project", scopeId: projectId, owner: orgId, roles: ["PROJECT_OWNER_VIEWER"], add: () => projects.addProjectMember({ projectId, userId, roles: ["PROJECT_OWNER_VIEWER"] }) },
      { level: "project_grant", scopeId: grantId, owner: orgId, roles: ["PROJECT_GRANT_OWNER_VIEWER"], add: () => projects.addProjectGrantMember({ projectId, grantId, userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] }) },
    ];
    const removals: TrailEntry[] = [];
    for (const membership of memberships) {
      const { events } = await trail().record(membership.add, { aggregateType: "member" });
      expect(events).toHaveLength(1);
      const type = `${membership.level === "project_grant" ? "project.grant" : membership.level}.member.removed`;
      const payload = { userId, roles: membership.roles, level: membership.level, scopeId: membership.scopeId };
      expect(events[0]).toEqual({ type: type.replace("removed", "added"), aggregateType: "member", aggregateId: anId, resourceOwner: membership.owner, actor: root.userId, payload });
      removals.push({ type, aggregateType: "member", aggregateId: events[0]!.aggregateId, resourceOwner: membership.owner, actor: root.userId, payload: { ...payload, cause: "user.removed" } });
    }
    // The delivery worker copies the mail (keeping it pending) on its own schedule: wait for it, so it does not land in the removal's window.
    await eventually(async () => (await trail().all({ aggregateType: "notification", aggregateId: outboxId })).some((e) => e.eventType === "notification.copied"), { what: "the mail's copy" });

    const mark = await trail().mark();
    const { details } = await users("grpc-h2c", root.token, orgId).removeUser({ userId });
    const upTo = details!.sequence;
    expect(await trail().since(mark, userTrail(userId), upTo, "grpc-h2c")).toEqual<TrailEntry[]>([
      {
        type: "user.removed",
        aggregateType: "user",
        aggregateId: userId,
        resourceOwner: orgId,
        actor: root.userId,
        payload: { userName: "trail-removed", tokenIds: [tokenId], idpLinks: [{ idpId, externalUserId: "ext-removed" }], outboxIds: [outboxId] },
      },
    ]);
    expectExactly(await trail().since(mark, { aggregateType: "member" }, upTo, "grpc-web-http1"), removals);
    expect(await trail().since(mark, { aggregateType: "notification", aggregateId: outboxId }, upTo, "connect-proto-h2c")).toEqual<TrailEntry[]>([
      {
        type: "notification.cancelled",
        aggregateType: "notification",
        aggregateId: outboxId,
        resourceOwner: instanceId,
        actor: root.userId,
        payload: { template: "user.verification", cause: "user.removed" },
      },
    ]);
  });
});
