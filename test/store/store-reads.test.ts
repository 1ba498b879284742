import { beforeEach, describe, expect, it } from "vitest";
import type { RowWrite } from "../../src/store/commit.js";
import type { ApplicationRow, IdentityProviderRow, MembershipRow, OutboxRow, SmtpConfigRow, TokenRow } from "../../src/store/rows.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf } from "./fixtures.js";

// Every read of the Store contract, and the writes no other contract test applies, on every engine: a list is in the
// order its rows were added (tokens: oldest first by creation time), a page continues after the position it was
// given, a filter keeps exactly the rows it names, a count counts what the list would show, and a write changes
// exactly the columns it names.

const org = (id: string, name: string, state: "active" | "inactive" = "active"): RowWrite => ({ kind: "organization.insert", row: { id, instanceId: "i1", name, nameKey: name.toLowerCase(), state } });
const human = (id: string, orgId: string, userName: string, email: string | null = null): RowWrite => ({
  kind: "user.insert",
  row: { id, instanceId: "i1", orgId, type: "human", state: "initial", userName, userNameKey: userName.toLowerCase(), email, emailKey: email?.toLowerCase() ?? null, emailVerified: false },
});
const token = (id: string, userId: string, createdAt: number): TokenRow => ({ id, userId, secretHash: `h-${id}`, expiresAt: null, createdAt, issuerUserId: null });
const membership = (id: string, userId: string, level: MembershipRow["level"], scopeId: string, roles: string[]): MembershipRow => ({
  id,
  userId,
  level,
  scopeId,
  ownerOrgId: "o1",
  projectId: null,
  roles,
});
const application = (id: string, projectId: string, state: ApplicationRow["state"] = "active"): ApplicationRow => ({
  id,
  projectId,
  name: id,
  nameKey: id,
  state,
  type: "api",
  clientId: `client-${id}`,
  clientSecretHash: null,
  settings: { type: "api", authMethod: 1 },
});
const idp = (id: string, ownerId: string): IdentityProviderRow => ({
  id,
  instanceId: "i1",
  orgId: ownerId === "i1" ? null : ownerId,
  ownerId,
  name: id,
  nameKey: id,
  issuer: "https://idp.example",
  clientId: "c",
  clientSecretSealed: "v1.s",
  scopes: ["openid", "email"],
  stylingType: 1,
  autoRegister: true,
});
const mail = (id: string, userId: string | null, nextAttemptAt: number, status: OutboxRow["status"] = "pending"): OutboxRow => ({
  id,
  instanceId: "i1",
  template: "user.initialization",
  recipient: `${id}@example.com`,
  userId,
  messageSealed: `v1.${id}`,
  status,
  attempts: 0,
  nextAttemptAt,
  createdAt: 1000,
  copiedAt: null,
  claimedBy: null,
  claimedUntil: null,
});

describe.each(storeEngines())("reads and writes on $name", (engine) => {
  const { store } = useStore(engine);
  const commit = (...writes: RowWrite[]) => store().commit(commitOf(writes));

  beforeEach(async () => {
    await commit({ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, org("o1", "First"));
  });

  it("the instance and organizations: paged in the order added, filtered by name part and state, counted alike", async () => {
    expect(await store().getInstance()).toEqual({ id: "i1", name: "I", defaultOrgId: "o1" });
    await commit(org("o2", "Second", "inactive"), org("o3", "Third"));
    const all = await store().listOrganizationsPage({ instanceId: "i1", limit: 10 });
    expect(all.map((entry) => entry.row.id)).toEqual(["o1", "o2", "o3"]);
    expect(all[1]!.row).toEqual({ id: "o2", instanceId: "i1", name: "Second", nameKey: "second", state: "inactive" });
    expect((await store().listOrganizationsPage({ instanceId: "i1", afterPosition: all[0]!.position, limit: 1 })).map((entry) => entry.row.id)).toEqual(["o2"]);
    expect((await store().listOrganizationsPage({ instanceId: "i1", nameContains: "ir", limit: 10 })).map((entry) => entry.row.id)).toEqual(["o1", "o3"]);
    expect((await store().listOrganizationsPage({ instanceId: "i1", state: "active", limit: 10 })).map((entry) => entry.row.id)).toEqual(["o1", "o3"]);
    expect(await store().countOrganizations({ instanceId: "i1" })).toBe(3);
    expect(await store().countOrganizations({ instanceId: "i1", nameContains: "ir", state: "inactive" })).toBe(0);
    expect(await store().countOrganizations({ instanceId: "other" })).toBe(0);
    await commit({ kind: "organization.setState", id: "o2", state: "active" });
    expect((await store().findOrganizationById("o2"))?.state).toBe("active");
    expect(await store().findOrganizationById("none")).toBeUndefined();
  });

  it("users: paged in the order added, filtered exactly by user name key and email key; email changes and verification", async () => {
    await commit(org("o2", "Other"), human("u1", "o1", "Zed", "Z@Example.com"), human("u2", "o2", "Amy"), human("u3", "o1", "Bob", "b@example.com"));
    const page = await store().listUsers({ instanceId: "i1", orgId: "o1", limit: 10 });
    expect(page.map((entry) => entry.row.id)).toEqual(["u1", "u3"]);
    expect((await store().listUsers({ instanceId: "i1", orgId: "o1", afterPosition: page[0]!.position, limit: 10 })).map((entry) => entry.row.id)).toEqual(["u3"]);
    expect((await store().listUsers({ instanceId: "i1", orgId: "o1", userNameKey: "bob", limit: 10 })).map((entry) => entry.row.id)).toEqual(["u3"]);
    expect((await store().listUsers({ instanceId: "i1", orgId: "o1", emailKey: "z@example.com", limit: 10 })).map((entry) => entry.row.id)).toEqual(["u1"]);
    expect(await store().countUsers({ instanceId: "i1", orgId: "o1" })).toBe(2);
    expect(await store().countUsers({ instanceId: "another", orgId: "o1" })).toBe(0);
    expect(await store().listUsers({ instanceId: "another", orgId: "o1", limit: 10 })).toEqual([]);
    expect(await store().countUsers({ instanceId: "i1", orgId: "o1", userNameKey: "amy" })).toBe(0);
    await commit({ kind: "user.emailChange", id: "u3", email: "New@Example.com", emailKey: "new@example.com", verified: false });
    expect(await store().findUserById("u3")).toMatchObject({ email: "New@Example.com", emailKey: "new@example.com", emailVerified: false, state: "initial" });
    await commit({ kind: "user.emailVerified", id: "u3", activate: false });
    expect(await store().findUserById("u3")).toMatchObject({ emailVerified: true, state: "initial" });
    await commit({ kind: "user.emailVerified", id: "u3", activate: true });
    expect(await store().findUserById("u3")).toMatchObject({ emailVerified: true, state: "active" });
    await commit({ kind: "user.setInactive", id: "u3", inactive: true }, { kind: "user.setLocked", id: "u1", locked: true });
    expect(await store().findUserById("u3")).toMatchObject({ inactive: true, locked: false });
    expect(await store().findUserById("u1")).toMatchObject({ inactive: false, locked: true });
  });

  it("tokens: oldest first by creation time, paged in the order added, counted; removed with their user's others", async () => {
    await commit(human("u1", "o1", "alice"), human("u2", "o1", "bob"));
    await commit(
      { kind: "token.insert", row: token("t-late", "u1", 3000) },
      { kind: "token.insert", row: token("t-early", "u1", 1000) },
      { kind: "token.insert", row: { ...token("t-issued", "u1", 2000), issuerUserId: "u2", expiresAt: 9000 } },
      { kind: "token.insert", row: token("t-other", "u2", 1000) },
    );
    expect((await store().listTokensOfUser("u1")).map((row) => row.id)).toEqual(["t-early", "t-issued", "t-late"]);
    expect(await store().findTokenById("t-issued")).toEqual({ ...token("t-issued", "u1", 2000), issuerUserId: "u2", expiresAt: 9000 });
    const page = await store().listTokensPage({ userId: "u1", limit: 2 });
    expect(page.map((entry) => entry.row.id)).toEqual(["t-late", "t-early"]);
    expect((await store().listTokensPage({ userId: "u1", afterPosition: page[1]!.position, limit: 2 })).map((entry) => entry.row.id)).toEqual(["t-issued"]);
    expect(await store().countTokensOfUser("u1")).toBe(3);
    await commit({ kind: "token.delete", id: "t-late" });
    expect(await store().countTokensOfUser("u1")).toBe(2);
    await commit({ kind: "token.deleteOfUser", userId: "u1" });
    expect(await store().countTokensOfUser("u1")).toBe(0);
    expect(await store().countTokensOfUser("u2")).toBe(1);
  });

  it("memberships: of a user, of a scope (paged, counted) in the order added, one found by user and scope; removed", async () => {
    await commit(human("u1", "o1", "alice"), human("u2", "o1", "bob"), human("u3", "o1", "carl"));
    const [m2, m1, m3, other] = [
      membership("m2", "u2", "org", "o1", ["ORG_OWNER"]),
      membership("m1", "u1", "org", "o1", ["ORG_USER_MANAGER", "ORG_OWNER"]),
      membership("m3", "u3", "org", "o1", []),
      membership("m4", "u1", "instance", "i1", ["IAM_OWNER"]),
    ];
    await commit(...[m2, m1, m3, other].map((row): RowWrite => ({ kind: "membership.insert", row })));
    // A user's memberships come in no promised order.
    expect((await store().listMembershipsOfUser("u1")).sort((a, b) => a.id.localeCompare(b.id))).toEqual([m1, other]);
    expect(await store().findMembership("u1", "org", "o1")).toEqual(m1);
    expect(await store().findMembership("u1", "project", "o1")).toBeUndefined();
    expect(await store().listMembershipsOfScope("org", "o1")).toEqual([m2, m1, m3]);
    const page = await store().listMembershipsOfScopePage({ level: "org", scopeId: "o1", limit: 2 });
    expect(page.map((entry) => entry.row)).toEqual([m2, m1]);
    expect((await store().listMembershipsOfScopePage({ level: "org", scopeId: "o1", afterPosition: page[1]!.position, limit: 2 })).map((entry) => entry.row)).toEqual([m3]);
    expect(await store().countMembershipsOfScope("org", "o1")).toBe(3);
    expect(await store().countMembershipsOfScope("instance", "o1")).toBe(0);
    await commit({ kind: "membership.delete", id: "m1", keepRoleHolder: "ORG_OWNER" });
    expect(await store().listMembershipsOfScope("org", "o1")).toEqual([m2, m3]);
  });

  it("projects, roles and grants: in the order added, paged and counted; renamed, state changed, role keys set, removed", async () => {
    await commit(org("o2", "Granted"), org("o3", "Also granted"));
    await commit(
      { kind: "project.insert", row: { id: "p1", instanceId: "i1", orgId: "o1", name: "Web", nameKey: "web", state: "active" } },
      { kind: "projectRole.insert", row: { projectId: "p1", roleKey: "viewer", displayName: "Viewer" } },
      { kind: "projectRole.insert", row: { projectId: "p1", roleKey: "admin", displayName: "Admin" } },
      { kind: "projectRole.insert", row: { projectId: "p1", roleKey: "editor", displayName: "Editor" } },
      { kind: "projectGrant.insert", row: { id: "g2", projectId: "p1", grantedOrgId: "o3", roleKeys: ["viewer"] } },
      { kind: "projectGrant.insert", row: { id: "g1", projectId: "p1", grantedOrgId: "o2", roleKeys: ["admin", "viewer"] } },
    );
    expect((await store().listProjectRoles("p1")).map((role) => role.roleKey)).toEqual(["viewer", "admin", "editor"]);
    const roles = await store().listProjectRolesPage({ projectId: "p1", limit: 2 });
    expect(roles.map((entry) => entry.row)).toEqual([
      { projectId: "p1", roleKey: "viewer", displayName: "Viewer" },
      { projectId: "p1", roleKey: "admin", displayName: "Admin" },
    ]);
    expect((await store().listProjectRolesPage({ projectId: "p1", afterPosition: roles[1]!.position, limit: 2 })).map((entry) => entry.row.roleKey)).toEqual(["editor"]);
    expect(await store().countProjectRoles("p1")).toBe(3);
    expect((await store().listProjectGrantsOfProject("p1")).map((grant) => grant.id)).toEqual(["g2", "g1"]);
    const grants = await store().listProjectGrantsPage({ projectId: "p1", limit: 1 });
    expect(grants.map((entry) => entry.row)).toEqual([{ id: "g2", projectId: "p1", grantedOrgId: "o3", roleKeys: ["viewer"] }]);
    expect((await store().listProjectGrantsPage({ projectId: "p1", afterPosition: grants[0]!.position, limit: 5 })).map((entry) => entry.row.id)).toEqual(["g1"]);
    expect(await store().countProjectGrants("p1")).toBe(2);
    await commit({ kind: "projectGrant.setRoleKeys", id: "g1", roleKeys: ["editor", "admin"] });
    expect((await store().findProjectGrantById("g1"))?.roleKeys).toEqual(["editor", "admin"]);
    await commit({ kind: "project.rename", id: "p1", name: "Website", nameKey: "website" }, { kind: "project.setState", id: "p1", state: "inactive" });
    expect(await store().findProjectById("p1")).toEqual({ id: "p1", instanceId: "i1", orgId: "o1", name: "Website", nameKey: "website", state: "inactive" });
    await commit({ kind: "projectRole.delete", projectId: "p1", roleKey: "viewer" }, { kind: "projectGrant.delete", id: "g2" });
    expect((await store().listProjectRoles("p1")).map((role) => role.roleKey)).toEqual(["admin", "editor"]);
    expect(await store().findProjectGrantById("g2")).toBeUndefined();
  });

  it("applications: in the order added, paged, filtered by state, counted; renamed, secret replaced, removed", async () => {
    await commit({ kind: "project.insert", row: { id: "p1", instanceId: "i1", orgId: "o1", name: "P", nameKey: "p", state: "active" } });
    await commit(...[application("a3", "p1"), application("a1", "p1", "inactive"), application("a2", "p1")].map((row): RowWrite => ({ kind: "application.insert", row })));
    expect((await store().listApplicationsOfProject("p1")).map((app) => app.id)).toEqual(["a3", "a1", "a2"]);
    const page = await store().listApplicationsPage({ projectId: "p1", limit: 2 });
    expect(page.map((entry) => entry.row.id)).toEqual(["a3", "a1"]);
    expect((await store().listApplicationsPage({ projectId: "p1", afterPosition: page[0]!.position, state: "active", limit: 5 })).map((entry) => entry.row.id)).toEqual(["a2"]);
    expect(await store().countApplications({ projectId: "p1" })).toBe(3);
    expect(await store().countApplications({ projectId: "p1", state: "inactive" })).toBe(1);
    await commit({ kind: "application.rename", id: "a2", name: "Renamed", nameKey: "renamed" }, { kind: "application.replaceSecretHash", id: "a2", previousHash: null, hash: "h1" });
    expect(await store().findApplicationById("a2")).toEqual({ ...application("a2", "p1"), name: "Renamed", nameKey: "renamed", clientSecretHash: "h1" });
    // The rename named one application: the others keep their names.
    expect((await store().findApplicationById("a1"))?.name).toBe(application("a1", "p1").name);
    await commit({ kind: "application.replaceSecretHash", id: "a2", previousHash: "h1", hash: "h2" }, { kind: "application.setState", id: "a1", state: "active" }, { kind: "application.delete", id: "a3" });
    expect((await store().findApplicationById("a2"))?.clientSecretHash).toBe("h2");
    expect((await store().listApplicationsOfProject("p1")).map((app) => [app.id, app.state])).toEqual([["a1", "active"], ["a2", "active"]]);
  });

  it("identity providers and links: paged over owners in the order added, counted; a provider's links with their users' organizations", async () => {
    await commit(org("o2", "Other"), human("u1", "o1", "alice"), human("u2", "o2", "bob"));
    await commit(...[idp("x-org2", "o2"), idp("x-inst", "i1"), idp("x-org1", "o1")].map((row): RowWrite => ({ kind: "identityProvider.insert", row })));
    const page = await store().listIdentityProvidersPage({ ownerIds: ["o1", "i1"], limit: 1 });
    expect(page.map((entry) => entry.row)).toEqual([idp("x-inst", "i1")]);
    expect((await store().listIdentityProvidersPage({ ownerIds: ["o1", "i1"], afterPosition: page[0]!.position, limit: 5 })).map((entry) => entry.row.id)).toEqual(["x-org1"]);
    expect(await store().countIdentityProviders({ ownerIds: ["o1", "i1"] })).toBe(2);
    expect(await store().countIdentityProviders({ ownerIds: [] })).toBe(0);
    await commit({ kind: "identityProvider.replace", id: "x-org1", fields: { name: "New", nameKey: "new", stylingType: 2, autoRegister: false } });
    expect(await store().findIdentityProviderById("x-org1")).toEqual({ ...idp("x-org1", "o1"), name: "New", nameKey: "new", stylingType: 2, autoRegister: false });
    await commit(
      { kind: "userIdpLink.insert", row: { userId: "u2", idpId: "x-inst", externalUserId: "ext-b", displayName: "B" } },
      { kind: "userIdpLink.insert", row: { userId: "u1", idpId: "x-inst", externalUserId: "ext-a", displayName: "A" } },
    );
    expect(await store().listIdpLinksOfIdp("x-inst")).toEqual([
      { userId: "u2", idpId: "x-inst", externalUserId: "ext-b", displayName: "B", orgId: "o2" },
      { userId: "u1", idpId: "x-inst", externalUserId: "ext-a", displayName: "A", orgId: "o1" },
    ]);
    expect(await store().listIdpLinksOfUser("u1")).toEqual([{ userId: "u1", idpId: "x-inst", externalUserId: "ext-a", displayName: "A" }]);
    await commit({ kind: "userIdpLink.delete", idpId: "x-inst", externalUserId: "ext-b" });
    expect((await store().listIdpLinksOfIdp("x-inst")).map((link) => link.userId)).toEqual(["u1"]);
  });

  it("codes: one per user and kind, replaced, used, voided; removed with their user's others", async () => {
    await commit(human("u1", "o1", "alice"));
    const code = (id: string, kind: "init" | "email") => ({ id, userId: "u1", kind, digest: `d-${id}`, expiresAt: 5000, attempts: 0, usedAt: null, emailKey: null });
    await commit({ kind: "code.replace", row: code("c1", "email") }, { kind: "code.replace", row: code("c2", "init") });
    await commit({ kind: "code.replace", row: code("c3", "email") });
    expect(await store().findCode("u1", "email")).toEqual(code("c3", "email"));
    await commit({ kind: "code.use", id: "c3", at: 4321 });
    expect((await store().findCode("u1", "email"))?.usedAt).toBe(4321);
    await commit({ kind: "code.void", userId: "u1", codeKind: "email" });
    expect(await store().findCode("u1", "email")).toBeUndefined();
    expect(await store().findCode("u1", "init")).toEqual(code("c2", "init"));
    await commit({ kind: "code.deleteOfUser", userId: "u1" });
    expect(await store().findCode("u1", "init")).toBeUndefined();
  });

  it("the outbox: in the order queued, by status; due ones by time then order; a user's; delivery outcomes recorded", async () => {
    await commit(human("u1", "o1", "alice"));
    await commit(...[mail("x1", "u1", 300), mail("x2", null, 100), mail("x3", "u1", 100), mail("x4", null, 50, "sent")].map((row): RowWrite => ({ kind: "outbox.insert", row })));
    expect((await store().listOutbox({ limit: 10 })).map((row) => row.id)).toEqual(["x1", "x2", "x3", "x4"]);
    expect((await store().listOutbox({ status: "pending", limit: 2 })).map((row) => row.id)).toEqual(["x1", "x2"]);
    expect((await store().listDueOutbox(300, 10)).map((row) => row.id)).toEqual(["x2", "x3", "x1"]);
    expect((await store().listDueOutbox(299, 1)).map((row) => row.id)).toEqual(["x2"]);
    expect((await store().listOutboxOfUser("u1")).map((row) => row.id)).toEqual(["x1", "x3"]);
    await commit(
      { kind: "outbox.sent", id: "x2", attempts: 1 },
      { kind: "outbox.retry", id: "x3", attempts: 2, nextAttemptAt: 700 },
      { kind: "outbox.failed", id: "x1", attempts: 10 },
      { kind: "outbox.copied", id: "x4", at: 42 },
    );
    const byId = Object.fromEntries((await store().listOutbox({ limit: 10 })).map((row) => [row.id, row]));
    expect(byId["x2"]).toEqual({ ...mail("x2", null, 100), status: "sent", attempts: 1 });
    expect(byId["x3"]).toEqual({ ...mail("x3", "u1", 700), attempts: 2 });
    expect(byId["x1"]).toEqual({ ...mail("x1", "u1", 300), status: "failed", attempts: 10 });
    expect(byId["x4"]).toEqual({ ...mail("x4", null, 50, "sent"), copiedAt: 42 });
    await commit({ kind: "outbox.deleteOfUser", userId: "u1" });
    expect((await store().listOutbox({ limit: 10 })).map((row) => row.id)).toEqual(["x2", "x4"]);
  });

  it("a mail queued without a user is linked to none", async () => {
    const { userId: _omitted, ...withoutUser } = mail("x1", null, 1);
    await commit({ kind: "outbox.insert", row: withoutUser });
    expect((await store().listOutbox({ limit: 1 }))[0]?.userId).toBeNull();
  });

  it("the SMTP configuration and password policy: stored, updated (password kept or dropped), password set, removed", async () => {
    const smtp: SmtpConfigRow = { instanceId: "i1", senderAddress: "a@example.com", senderName: "A", tls: true, host: "smtp.example", user: "u", passwordSealed: "v1.p" };
    await commit({ kind: "smtp.insert", row: smtp }, { kind: "passwordPolicy.insert", row: { instanceId: "i1", minLength: 8, requireUppercase: false, requireLowercase: true, requireDigit: false, requireSymbol: true } });
    expect(await store().getSmtpConfig("i1")).toEqual(smtp);
    const settings = { senderAddress: "b@example.com", senderName: "B", tls: false, host: "relay.example", user: "v" };
    await commit({ kind: "smtp.update", instanceId: "i1", settings, dropPassword: false });
    expect(await store().getSmtpConfig("i1")).toEqual({ instanceId: "i1", ...settings, passwordSealed: "v1.p" });
    await commit({ kind: "smtp.update", instanceId: "i1", settings, dropPassword: true });
    expect((await store().getSmtpConfig("i1"))?.passwordSealed).toBeNull();
    await commit({ kind: "smtp.setPassword", instanceId: "i1", passwordSealed: "v1.q" });
    expect((await store().getSmtpConfig("i1"))?.passwordSealed).toBe("v1.q");
    await commit({ kind: "smtp.delete", instanceId: "i1" });
    expect(await store().getSmtpConfig("i1")).toBeUndefined();
    expect(await store().getPasswordPolicy("i1")).toEqual({ instanceId: "i1", minLength: 8, requireUppercase: false, requireLowercase: true, requireDigit: false, requireSymbol: true });
    expect(await store().getPasswordPolicy("other")).toBeUndefined();
  });

  it("a user removed takes nothing it still needs: its links and mails go with the writes that name them, then the user", async () => {
    await commit(human("u1", "o1", "alice"), { kind: "identityProvider.insert", row: idp("x1", "o1") });
    await commit({ kind: "userIdpLink.insert", row: { userId: "u1", idpId: "x1", externalUserId: "e", displayName: "E" } }, { kind: "outbox.insert", row: mail("m1", "u1", 1) });
    await commit({ kind: "userIdpLink.deleteOfUser", userId: "u1" }, { kind: "outbox.deleteOfUser", userId: "u1" }, { kind: "user.delete", id: "u1" });
    expect(await store().findUserById("u1")).toBeUndefined();
    expect(await store().listIdpLinksOfIdp("x1")).toEqual([]);
    expect(await store().listOutbox({ limit: 10 })).toEqual([]);
    await commit({ kind: "identityProvider.delete", id: "x1" });
    expect(await store().findIdentityProviderById("x1")).toBeUndefined();
  });
});
