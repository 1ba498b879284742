import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import type { Commit, RowWrite } from "../../src/store/commit.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf, FIXTURE_AT, machineUser } from "./fixtures.js";

// The storage contract (src/store/store.ts), the same on every engine: a commit's writes and events are applied
// together or not at all; events get strictly increasing sequences and per-aggregate versions; uniqueness rules are
// kept by the database and answer with the rule's reason (db-errors.ts); what was committed survives a reopen.

const base = (writes: Commit["writes"], events: Commit["events"]): Commit => ({ instanceId: "i1", actor: "tester", at: FIXTURE_AT, writes, events });
const instance = base(
  [
    { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
    { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
  ],
  [{ aggregateType: "instance", aggregateId: "i1", type: "instance.added", payload: {}, resourceOwner: "i1" }],
);
const user = (id: string, userName: string, orgId = "o1"): RowWrite => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId, type: "machine", state: "active", userName, userNameKey: userName.toLowerCase(), machineName: "m", machineDescription: "" },
});
const userAdded = (id: string) => ({ aggregateType: "user" as const, aggregateId: id, type: "user.machine.added", payload: {}, resourceOwner: "o1" });
const orgMember = (id: string, userId: string, orgId: string, roles: string[]): RowWrite => ({
  kind: "membership.insert",
  row: { id, userId, level: "org", scopeId: orgId, ownerOrgId: orgId, projectId: null, roles },
});

describe.each(storeEngines())("the store contract on $name", (engine) => {
  const { store, reopen } = useStore(engine);
  const commit = (...writes: RowWrite[]) => store().commit(commitOf(writes));

  it("appends events with strictly increasing sequences and per-aggregate versions", async () => {
    await store().commit(instance);
    const [a] = await store().commit(base([user("u1", "alice")], [userAdded("u1")]));
    const [b, c] = await store().commit(base([], [userAdded("u1"), userAdded("u1")]));
    expect([a!.sequence, b!.sequence, c!.sequence]).toEqual([2, 3, 4]);
    expect([a!.aggregateVersion, b!.aggregateVersion, c!.aggregateVersion]).toEqual([1, 2, 3]);
    // A span is the marks of the first and the last event: where they stand in the log, whose, and when.
    expect(await store().aggregateSpan("user", "u1")).toEqual({
      first: { sequence: 2, aggregateVersion: 1, resourceOwner: "o1", createdAt: FIXTURE_AT },
      last: { sequence: 4, aggregateVersion: 3, resourceOwner: "o1", createdAt: FIXTURE_AT },
    });
  });

  it("stores events as committed: payload, actor, owner and time read back exactly, in sequence order, filtered and paged", async () => {
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    const payload = { b: 1, a: [2, "x"], nested: { z: null, y: true } };
    await store().commit(instance);
    await store().commit({ instanceId: "i1", actor: "admin-1", at, writes: [], events: [{ ...userAdded("u9"), payload, resourceOwner: "o7" }] });
    const [event] = await store().listEvents({ aggregateType: "user", limit: 10 });
    expect(event).toEqual({ sequence: 2, instanceId: "i1", aggregateType: "user", aggregateId: "u9", aggregateVersion: 1, type: "user.machine.added", payload, actor: "admin-1", resourceOwner: "o7", createdAt: at });
    expect(JSON.stringify(event!.payload)).toBe(JSON.stringify(payload));
    expect(await store().listEvents({ resourceOwner: "o7", limit: 10 })).toHaveLength(1);
    expect((await store().listEvents({ afterSequence: 1, limit: 10 })).map((e) => e.sequence)).toEqual([2]);
    expect((await store().listEvents({ fromSequence: 1, limit: 1 })).map((e) => e.sequence)).toEqual([1]);
    expect(await store().countEvents({ aggregateId: "u9" })).toBe(1);
    expect(await store().countEvents({})).toBe(2);
  });

  it("a commit with a row write of no known kind fails whole: nothing of it is written", async () => {
    await store().commit(instance);
    const before = await store().countEvents({});
    const unknownWrite = { kind: "user.teleport", id: "u1" } as unknown as RowWrite;
    await expect(store().commit(base([user("u1", "alice"), unknownWrite], [userAdded("u1")]))).rejects.toThrow(/unknown row write "user.teleport"/);
    expect(await store().findUserById("u1")).toBeUndefined();
    expect(await store().countEvents({})).toBe(before);
  });

  it("a span since the newest creation event starts there: an object created again under the same id starts anew", async () => {
    await store().commit(instance);
    await store().commit(base([user("u1", "alice")], [userAdded("u1")]));
    const [, recreated] = await store().commit(base([], [{ ...userAdded("u1"), type: "user.removed" }, userAdded("u1")]));
    await store().commit(base([], [{ ...userAdded("u1"), type: "user.changed" }]));
    const span = await store().aggregateSpan("user", "u1", userAdded("u1").type);
    expect(span?.first.sequence).toBe(recreated!.sequence);
    expect(span?.last.aggregateVersion).toBe(4);
    expect((await store().aggregateSpan("user", "u1"))?.first.aggregateVersion).toBe(1);
    expect(await store().aggregateSpan("user", "u1", "user.never")).toBeUndefined();
  });

  it("maps a unique violation to the rule's DomainError and writes nothing of that commit", async () => {
    await store().commit(instance);
    await store().commit(base([user("u1", "alice")], [userAdded("u1")]));
    const before = await store().countEvents({});
    const failed = store().commit(base([user("u2", "bob"), user("u3", "ALICE".toLowerCase())], [userAdded("u2"), userAdded("u3")]));
    await expect(failed).rejects.toBeInstanceOf(DomainError);
    await expect(failed).rejects.toMatchObject({ kind: "already_exists", reason: "user.already_exists" });
    expect(await store().countEvents({})).toBe(before);
    expect(await store().findUserById("u2")).toBeUndefined();
  });

  it("a reference to a row that does not exist is failed_precondition reference.not_found", async () => {
    await store().commit(instance);
    const failed = store().commit(base([user("u0", "dangling", "no-such-org")], []));
    await expect(failed).rejects.toBeInstanceOf(DomainError);
    await expect(failed).rejects.toMatchObject({ kind: "failed_precondition", reason: "reference.not_found", message: expect.stringMatching(/referenced object does not exist/) });
  });

  it("reads back every row as written: times in milliseconds as numbers, flags as booleans, JSON as written, nulls as null", async () => {
    const createdAt = Date.UTC(2026, 10, 26, 3, 4, 5, 678);
    // The last millisecond a Date can hold: beyond 32 bits, exact in a double.
    const expiresAt = 8_640_000_000_000_000;
    await store().commit(instance);
    const human: RowWrite = {
      kind: "user.insert",
      row: { id: "h1", instanceId: "i1", orgId: "o1", type: "human", state: "initial", userName: "Hu", userNameKey: "hu", firstName: "H", lastName: "U", gender: 2, email: "h@example.com", emailKey: "h@example.com", emailVerified: false, phoneVerified: true, passwordChangeRequired: true },
    };
    const settings = { type: "oidc" as const, redirectUris: ["https://b.example/cb", "https://a.example/cb"], responseTypes: [0], grantTypes: [0, 2], appType: 1, authMethod: 3 };
    await commit(
      human,
      { kind: "token.insert", row: { id: "t1", userId: "h1", secretHash: "s", expiresAt, createdAt, issuerUserId: null } },
      { kind: "code.replace", row: { id: "c1", userId: "h1", kind: "init", digest: "d", expiresAt: createdAt + 1, attempts: 0, usedAt: null } },
      { kind: "outbox.insert", row: { id: "x1", instanceId: "i1", template: "t", recipient: "h@example.com", messageSealed: "v1.m", status: "pending", attempts: 0, nextAttemptAt: createdAt, createdAt, copiedAt: null } },
      { kind: "project.insert", row: { id: "p1", instanceId: "i1", orgId: "o1", name: "P", nameKey: "p", state: "active" } },
      { kind: "application.insert", row: { id: "a1", projectId: "p1", name: "A", nameKey: "a", state: "inactive", type: "oidc", clientId: "cid", clientSecretHash: null, settings } },
      { kind: "passwordPolicy.insert", row: { instanceId: "i1", minLength: 12, requireUppercase: true, requireLowercase: false, requireDigit: true, requireSymbol: false } },
    );
    await commit({ kind: "code.use", id: "c1", at: createdAt + 2 });
    expect(await store().findUserById("h1")).toEqual({
      id: "h1", instanceId: "i1", orgId: "o1", type: "human", state: "initial", inactive: false, locked: false, userName: "Hu", userNameKey: "hu",
      machineName: null, machineDescription: null, firstName: "H", lastName: "U", nickName: null, displayName: null, preferredLanguage: null, gender: 2,
      email: "h@example.com", emailKey: "h@example.com", emailVerified: false, phone: null, phoneVerified: true, passwordHash: null,
      passwordChangeRequired: true, failedPasswordAttempts: 0, otpSecretSealed: null, externalId: null,
    });
    expect(await store().findTokenById("t1")).toEqual({ id: "t1", userId: "h1", secretHash: "s", expiresAt, createdAt, issuerUserId: null });
    expect(await store().findCode("h1", "init")).toEqual({ id: "c1", userId: "h1", kind: "init", digest: "d", expiresAt: createdAt + 1, attempts: 0, usedAt: createdAt + 2, emailKey: null });
    expect(await store().listOutboxOfUser("h1")).toEqual([]);
    expect(await store().listDueOutbox(createdAt, 10)).toEqual([{ id: "x1", instanceId: "i1", template: "t", recipient: "h@example.com", userId: null, messageSealed: "v1.m", status: "pending", attempts: 0, nextAttemptAt: createdAt, createdAt, copiedAt: null, claimedBy: null, claimedUntil: null }]);
    expect(await store().listDueOutbox(createdAt - 1, 10)).toEqual([]);
    const app = await store().findApplicationById("a1");
    expect(app).toEqual({ id: "a1", projectId: "p1", name: "A", nameKey: "a", state: "inactive", type: "oidc", clientId: "cid", clientSecretHash: null, settings });
    expect(JSON.stringify(app!.settings)).toBe(JSON.stringify(settings));
    expect(await store().getPasswordPolicy("i1")).toEqual({ instanceId: "i1", minLength: 12, requireUppercase: true, requireLowercase: false, requireDigit: true, requireSymbol: false });
  });

  it("lists in the order rows were added, paged by position, and filters names by plain substring (no wildcards)", async () => {
    await store().commit(instance);
    // Names whose order differs from the order of adding, and from their ids.
    const names = ["zeta", "a_b", "a%b", "alpha", "ab"];
    await commit(...names.map((name, i): RowWrite => ({ kind: "project.insert", row: { id: `p${9 - i}`, instanceId: "i1", orgId: "o1", name, nameKey: name, state: i === 3 ? "inactive" : "active" } })));
    const all = await store().listProjectsPage({ orgId: "o1", limit: 10 });
    expect(all.map((entry) => entry.row.name)).toEqual(names);
    const [first, second] = await store().listProjectsPage({ orgId: "o1", limit: 2 });
    expect([first!.row.name, second!.row.name]).toEqual(["zeta", "a_b"]);
    const rest = await store().listProjectsPage({ orgId: "o1", afterPosition: second!.position, limit: 10 });
    expect(rest.map((entry) => entry.row.name)).toEqual(["a%b", "alpha", "ab"]);
    expect((await store().listProjectsPage({ orgId: "o1", nameContains: "_", limit: 10 })).map((entry) => entry.row.name)).toEqual(["a_b"]);
    expect((await store().listProjectsPage({ orgId: "o1", nameContains: "%", limit: 10 })).map((entry) => entry.row.name)).toEqual(["a%b"]);
    expect(await store().countProjects({ orgId: "o1", nameContains: "b" })).toBe(3);
    expect(await store().countProjects({ orgId: "o1", state: "inactive" })).toBe(1);
    expect((await store().listProjectsPage({ orgId: "o1", ids: ["p9", "p5"], limit: 10 })).map((entry) => entry.row.id)).toEqual(["p9", "p5"]);
    expect(Object.keys(first!.row).sort()).toEqual(["id", "instanceId", "name", "nameKey", "orgId", "state"]);
  });

  // An engine difference, pinned: PostgreSQL's text cannot hold U+0000 (SQLite's can). No request brings one to the
  // store: the validation interceptor refuses U+0000 in every text of a request (test/api/nul-in-text.test.ts).
  (engine.name === "postgres" ? it.fails : it)("stores text as given, also a U+0000 character", async () => {
    await store().commit(instance);
    await commit({ kind: "organization.insert", row: { id: "o-nul", instanceId: "i1", name: "a\u0000b", nameKey: "a\u0000b", state: "active" } });
    expect((await store().findOrganizationById("o-nul"))?.name).toBe("a\u0000b");
  });

  it("keeps data across reopen (migrations are idempotent)", async () => {
    await store().commit(instance);
    const reopened = await reopen();
    expect((await reopened.getInstance())?.id).toBe("i1");
    expect(await reopened.countEvents({})).toBe(1);
  });

  it("keeps the master-key probe stored first: a second one is ignored", async () => {
    expect(await store().getMasterKeyProbe()).toBeUndefined();
    await store().setMasterKeyProbe("v1.first");
    await store().setMasterKeyProbe("v1.second");
    expect(await store().getMasterKeyProbe()).toBe("v1.first");
  });

  describe("counting the holders of a role in a scope", () => {
    it("counts the scope's other members that hold the role, and no one else", async () => {
      await store().commit(instance);
      await commit({ kind: "organization.insert", row: { id: "o2", instanceId: "i1", name: "O2", nameKey: "o2", state: "active" } });
      await commit(machineUser("a"), machineUser("b"), machineUser("c"), machineUser("d"));
      await commit(
        orgMember("ma", "a", "o1", ["ORG_OWNER"]),
        orgMember("mb", "b", "o1", ["ORG_USER_MANAGER", "ORG_OWNER"]),
        orgMember("mc", "c", "o1", ["ORG_USER_MANAGER"]),
        // Another scope's owner is no holder here.
        orgMember("md", "d", "o2", ["ORG_OWNER"]),
      );
      expect(await store().countRoleHolders("org", "o1", "ORG_OWNER", "ma")).toBe(1);
      expect(await store().countRoleHolders("org", "o1", "ORG_OWNER", "none")).toBe(2);
      expect(await store().countRoleHolders("org", "o1", "ORG_USER_MANAGER", "mb")).toBe(1);
      expect(await store().countRoleHolders("org", "o2", "ORG_OWNER", "md")).toBe(0);
      expect(await store().countRoleHolders("project", "o1", "ORG_OWNER", "none")).toBe(0);
    });
  });

  const project = (id: string, name = id): RowWrite => ({ kind: "project.insert", row: { id, instanceId: "i1", orgId: "o1", name, nameKey: name.toLowerCase(), state: "active" } });
  const application = (id: string, projectId: string, name = id): RowWrite => ({
    kind: "application.insert",
    row: { id, projectId, name, nameKey: name.toLowerCase(), state: "active", type: "api", clientId: `client-${id}`, clientSecretHash: null, settings: { type: "api", authMethod: 0 } },
  });
  const idp = (id: string, name = id): RowWrite => ({
    kind: "identityProvider.insert",
    row: { id, instanceId: "i1", orgId: "o1", ownerId: "o1", name, nameKey: name.toLowerCase(), issuer: "https://idp.example", clientId: "c", clientSecretSealed: "v1.x", scopes: ["openid"], stylingType: 0, autoRegister: false },
  });
  const smtp = (host: string): RowWrite => ({
    kind: "smtp.insert",
    row: { instanceId: "i1", senderAddress: "a@example.com", senderName: "A", tls: true, host, user: "u", passwordSealed: null },
  });
  const org2: RowWrite = { kind: "organization.insert", row: { id: "o2", instanceId: "i1", name: "O2", nameKey: "o2", state: "active" } };

  describe("a removal that finds what was added since its caller looked fails whole: aborted store.condition_failed, nothing removed", () => {
    // Each removal's command checked first that nothing refers to what it removes; the store checks again inside the
    // commit, where another replica's addition in between is seen (store-concurrency.test.ts races one of them).
    const cases: { what: string; setup: RowWrite[]; removal: RowWrite; message: RegExp; still: () => Promise<unknown> }[] = [
      {
        what: "a project grant that got a member",
        setup: [org2, project("p1"), { kind: "projectGrant.insert", row: { id: "g1", projectId: "p1", grantedOrgId: "o2", roleKeys: [] } }, user("u1", "alice", "o2"), { kind: "membership.insert", row: { id: "m1", userId: "u1", level: "project_grant", scopeId: "g1", ownerOrgId: "o2", projectId: "p1", roles: ["PROJECT_GRANT_OWNER"] } }],
        removal: { kind: "projectGrant.delete", id: "g1" },
        message: /member was added to the grant/,
        still: () => store().findProjectGrantById("g1"),
      },
      {
        what: "an identity provider a user was linked to",
        setup: [idp("idp1"), user("u1", "alice"), { kind: "userIdpLink.insert", row: { userId: "u1", idpId: "idp1", externalUserId: "ext", displayName: "A" } }],
        removal: { kind: "identityProvider.delete", id: "idp1" },
        message: /linked to the identity provider/,
        still: () => store().findIdentityProviderById("idp1"),
      },
      {
        what: "a user that got a membership",
        setup: [user("u1", "alice"), orgMember("m1", "u1", "o1", ["ORG_OWNER"])],
        removal: { kind: "user.delete", id: "u1" },
        message: /got a membership/,
        still: () => store().findUserById("u1"),
      },
      {
        what: "a project that got a member",
        setup: [project("p1"), user("u1", "alice"), { kind: "membership.insert", row: { id: "m1", userId: "u1", level: "project", scopeId: "p1", ownerOrgId: "o1", projectId: null, roles: ["PROJECT_OWNER"] } }],
        removal: { kind: "project.delete", id: "p1" },
        message: /added to the project/,
        still: () => store().findProjectById("p1"),
      },
    ];

    it.each(cases)("$what", async ({ setup, removal, message, still }) => {
      await store().commit(instance);
      await commit(...setup);
      const before = await store().countEvents({});
      const failed = store().commit(base([removal], [{ aggregateType: "org", aggregateId: "o1", type: "org.changed", payload: {}, resourceOwner: "o1" }]));
      await expect(failed).rejects.toMatchObject({ kind: "aborted", reason: "store.condition_failed", message: expect.stringMatching(message) });
      expect(await still()).toBeDefined();
      expect(await store().countEvents({})).toBe(before);
    });
  });

  describe("each unique index that guards a rule answers with the rule's reason, and the commit writes nothing", () => {
    const cases: { rule: string; reason: string; message: RegExp; setup: RowWrite[]; conflicting: RowWrite; gone: () => Promise<unknown> }[] = [
      {
        rule: "organization name per instance",
        reason: "organization.already_exists",
        message: /organization with this name exists/,
        setup: [],
        conflicting: { kind: "organization.insert", row: { id: "o3", instanceId: "i1", name: "o", nameKey: "o", state: "active" } },
        gone: () => store().findOrganizationById("o3"),
      },
      { rule: "user name per instance", reason: "user.already_exists", message: /user with this user name exists/, setup: [user("u1", "alice")], conflicting: user("u2", "Alice"), gone: () => store().findUserById("u2") },
      {
        rule: "one membership per user and scope",
        reason: "member.already_exists",
        message: /member here already/,
        setup: [user("u1", "alice"), orgMember("m1", "u1", "o1", ["ORG_OWNER"])],
        conflicting: orgMember("m2", "u1", "o1", ["ORG_USER_MANAGER"]),
        gone: () => store().listMembershipsOfUser("u1").then((rows) => rows.find((row) => row.id === "m2")),
      },
      { rule: "project name per organization", reason: "project.already_exists", message: /project with this name exists/, setup: [project("p1", "Web")], conflicting: project("p2", "WEB"), gone: () => store().findProjectById("p2") },
      {
        rule: "role key per project",
        reason: "project.role.already_exists",
        message: /has this role already/,
        setup: [project("p1"), { kind: "projectRole.insert", row: { projectId: "p1", roleKey: "viewer", displayName: "Viewer" } }],
        conflicting: { kind: "projectRole.insert", row: { projectId: "p1", roleKey: "viewer", displayName: "Other" } },
        gone: () => store().listProjectRoles("p1").then((rows) => rows.find((row) => row.displayName === "Other")),
      },
      {
        rule: "one grant per project and organization",
        reason: "project.grant.already_exists",
        message: /granted to this organization already/,
        setup: [org2, project("p1"), { kind: "projectGrant.insert", row: { id: "g1", projectId: "p1", grantedOrgId: "o2", roleKeys: [] } }],
        conflicting: { kind: "projectGrant.insert", row: { id: "g2", projectId: "p1", grantedOrgId: "o2", roleKeys: [] } },
        gone: () => store().findProjectGrantById("g2"),
      },
      {
        rule: "application name per project",
        reason: "application.already_exists",
        message: /application with this name exists/,
        setup: [project("p1"), application("a1", "p1", "App")],
        conflicting: application("a2", "p1", "app"),
        gone: () => store().findApplicationById("a2"),
      },
      { rule: "identity provider name per owner", reason: "idp.already_exists", message: /identity provider with this name exists/, setup: [idp("idp1", "Corp")], conflicting: idp("idp2", "CORP"), gone: () => store().findIdentityProviderById("idp2") },
      {
        rule: "an external account links to one user",
        reason: "user.idp_link.already_exists",
        message: /linked to another user/,
        setup: [idp("idp1"), user("u1", "alice"), user("u2", "bob"), { kind: "userIdpLink.insert", row: { userId: "u1", idpId: "idp1", externalUserId: "ext", displayName: "A" } }],
        conflicting: { kind: "userIdpLink.insert", row: { userId: "u2", idpId: "idp1", externalUserId: "ext", displayName: "B" } },
        gone: () => store().listIdpLinksOfUser("u2").then((rows) => rows[0]),
      },
      { rule: "one SMTP configuration per instance", reason: "smtp.already_exists", message: /has an SMTP configuration/, setup: [smtp("first.example")], conflicting: smtp("second.example"), gone: () => store().getSmtpConfig("i1").then((row) => (row?.host === "second.example" ? row : undefined)) },
    ];

    it.each(cases)("$rule: already_exists $reason", async ({ reason, message, setup, conflicting, gone }) => {
      await store().commit(instance);
      if (setup.length > 0) await commit(...setup);
      const before = await store().countEvents({});
      const failed = store().commit(base([conflicting], [{ aggregateType: "org", aggregateId: "o1", type: "org.changed", payload: {}, resourceOwner: "o1" }]));
      await expect(failed).rejects.toBeInstanceOf(DomainError);
      await expect(failed).rejects.toMatchObject({ kind: "already_exists", reason, message: expect.stringMatching(message) });
      expect(await gone()).toBeUndefined();
      expect(await store().countEvents({})).toBe(before);
    });
  });
});
