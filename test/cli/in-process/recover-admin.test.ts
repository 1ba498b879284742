import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { authenticate } from "../../../src/access/authenticate.js";
import { recoverAdmin } from "../../../src/commands/recover-admin.js";
import type { Deps } from "../../../src/context.js";
import { issueToken } from "../../../src/domain/token.js";
import type { MembershipRow } from "../../../src/store/rows.js";
import type { Store } from "../../../src/store/store.js";
import type { RowWrite } from "../../../src/store/commit.js";
import type { IdGenerator } from "../../../src/support/ids.js";
import { TestClock } from "../../support/server.js";
import { bootstrappedDataDir, openStore, useTempRoot } from "../../startup/data-dir.js";

// `gatehouse recover-admin`'s command, run on a real bootstrapped database in this process (the spawned
// command is test/cli/recover-admin.test.ts): whatever state `admin` is in, the operator gets a working
// IAM_OWNER token for it, in one transaction, recorded by `instance.admin.recovered`.
const root = useTempRoot("recover-admin");
let dirs = 0;
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** Ids a test can predict: recover-1, recover-2 … */
const countingIds = (): IdGenerator => {
  let next = 0;
  return { next: () => `recover-${++next}` };
};

async function world() {
  const clock = new TestClock(new Date("2026-03-01T12:00:00.000Z"));
  const bootstrapped = await bootstrappedDataDir(join(root(), `d${++dirs}`), { clock });
  const store = openStore(bootstrapped.dataDir);
  stores.push(store);
  const instance = (await store.getInstance())!;
  const [admin] = await store.listUsers({ instanceId: instance.id, orgId: instance.defaultOrgId, userNameKey: "admin", limit: 1 });
  const deps: Deps = { store, clock, ids: countingIds(), masterKey: bootstrapped.masterKey, externalUrl: "http://127.0.0.1:8080" };
  const write = (...writes: RowWrite[]) => store.commit({ instanceId: instance.id, actor: "test", at: clock.now(), writes, events: [] });
  const lastSequence = async () => (await store.listEvents({ limit: 10_000 })).at(-1)?.sequence ?? 0;
  const eventsAfter = async (sequence: number) => (await store.listEvents({ afterSequence: sequence, limit: 100 })).map((e) => ({ type: e.type, payload: e.payload, actor: e.actor, resourceOwner: e.resourceOwner }));
  const instanceMembership = (userId: string) => store.findMembership(userId, "instance", instance.id);
  /** Each event after `sequence` as [type, aggregate type, aggregate id]: the object it is about. */
  const aggregatesAfter = async (sequence: number) => (await store.listEvents({ afterSequence: sequence, limit: 100 })).map((e) => [e.type, e.aggregateType, e.aggregateId]);
  return { ...bootstrapped, clock, store, deps, instance, adminId: admin!.row.id, write, lastSequence, eventsAfter, aggregatesAfter, instanceMembership };
}
type World = Awaited<ReturnType<typeof world>>;

/** What the token can do: the principal it authenticates as, with its instance roles. */
async function instanceRolesOf(w: World, token: string) {
  const principal = await authenticate(w.deps, `Bearer ${token}`);
  return { userId: principal.userId, roles: principal.memberships.filter((m) => m.level === "instance").flatMap((m) => m.roles) };
}

/** A machine user in the first organization, optionally with instance roles, and a token it issued for `admin`. */
async function tokenIssuedForAdminBy(w: World, userName: string, instanceRoles: string[]) {
  const userId = `${userName}-id`;
  const tokenId = `${userName}-issued-token`;
  const writes: RowWrite[] = [
    { kind: "user.insert", row: { id: userId, instanceId: w.instance.id, orgId: w.instance.defaultOrgId, type: "machine", state: "active", userName, userNameKey: userName, machineName: userName, machineDescription: "" } },
    { kind: "token.insert", row: { id: tokenId, userId: w.adminId, secretHash: "x", expiresAt: null, createdAt: 0, issuerUserId: userId } },
  ];
  if (instanceRoles.length > 0) {
    writes.push({ kind: "membership.insert", row: { id: `${userName}-membership`, userId, level: "instance", scopeId: w.instance.id, ownerOrgId: w.instance.id, projectId: null, roles: instanceRoles } });
  }
  await w.write(...writes);
  return tokenId;
}

describe("recoverAdmin", () => {
  it("on a database without an instance: refused with what to do, nothing written", async () => {
    const store = openStore(join(root(), `empty-${++dirs}`));
    stores.push(store);
    const deps = { store, clock: new TestClock(), ids: countingIds() };
    await expect(recoverAdmin(deps)).rejects.toThrow("the database has no instance yet: start the server once, it bootstraps one");
    expect(await store.listEvents({ limit: 10 })).toEqual([]);
  });

  it("admin still holding IAM_OWNER: a new owner token only — roles, other tokens and issued tokens untouched", async () => {
    const w = await world();
    const membershipBefore = await w.instanceMembership(w.adminId);
    const issuedByViewer = await tokenIssuedForAdminBy(w, "viewer", ["IAM_OWNER_VIEWER"]);
    const before = await w.lastSequence();
    const token = issueToken("recovered-token");

    const result = await recoverAdmin(w.deps, token);

    expect(result).toEqual({ adminUserId: w.adminId, tokenId: "recovered-token", token: token.token, userCreated: false });
    expect(await instanceRolesOf(w, token.token)).toEqual({ userId: w.adminId, roles: ["IAM_OWNER"] });
    expect(await w.store.findTokenById("recovered-token")).toEqual({ id: "recovered-token", userId: w.adminId, secretHash: token.secretHash, expiresAt: null, createdAt: w.clock.now().getTime(), issuerUserId: null });
    expect(await w.instanceMembership(w.adminId)).toEqual(membershipBefore);
    expect((await instanceRolesOf(w, w.adminToken)).roles).toEqual(["IAM_OWNER"]);
    expect(await w.store.findTokenById(issuedByViewer)).toBeDefined();
    expect(await w.eventsAfter(before)).toEqual([
      { type: "user.pat.added", payload: { tokenId: "recovered-token", expirationDate: null }, actor: "system", resourceOwner: w.instance.defaultOrgId },
      { type: "instance.admin.recovered", payload: { userId: w.adminId, tokenId: "recovered-token", userCreated: false }, actor: "system", resourceOwner: w.instance.id },
    ]);
  });

  it("without a token given: issues one with a fresh id, and returns its secret once", async () => {
    const w = await world();
    const result = await recoverAdmin(w.deps);
    expect(result.tokenId).toBe("recover-1");
    expect(result.token).toMatch(/^gh1\.recover-1\.\S+$/);
    expect(await instanceRolesOf(w, result.token)).toEqual({ userId: w.adminId, roles: ["IAM_OWNER"] });
  });

  it("admin that lost IAM_OWNER but kept another instance role: IAM_OWNER is added to what it holds", async () => {
    const w = await world();
    const old = (await w.instanceMembership(w.adminId)) as MembershipRow;
    await w.write({ kind: "membership.delete", id: old.id }, { kind: "membership.insert", row: { ...old, id: "viewer-only", roles: ["IAM_OWNER_VIEWER"] } });
    const before = await w.lastSequence();

    const result = await recoverAdmin(w.deps, issueToken("t1"));

    expect(await w.instanceMembership(w.adminId)).toEqual({ ...old, id: "recover-1", roles: ["IAM_OWNER_VIEWER", "IAM_OWNER"] });
    expect(await instanceRolesOf(w, result.token)).toEqual({ userId: w.adminId, roles: ["IAM_OWNER_VIEWER", "IAM_OWNER"] });
    expect((await w.eventsAfter(before)).map((e) => [e.type, e.payload])).toEqual([
      ["instance.member.added", { userId: w.adminId, roles: ["IAM_OWNER_VIEWER", "IAM_OWNER"], level: "instance", scopeId: w.instance.id }],
      ["user.pat.added", { tokenId: "t1", expirationDate: null }],
      ["instance.admin.recovered", { userId: w.adminId, tokenId: "t1", userCreated: false }],
    ]);
  });

  it("admin without any instance role: gets IAM_OWNER; tokens others issued for it from below IAM_OWNER are revoked, the rest kept", async () => {
    const w = await world();
    await w.write({ kind: "membership.delete", id: ((await w.instanceMembership(w.adminId)) as MembershipRow).id });
    const fromViewer = await tokenIssuedForAdminBy(w, "viewer", ["IAM_OWNER_VIEWER"]);
    const fromOwner = await tokenIssuedForAdminBy(w, "owner", ["IAM_OWNER"]);
    const before = await w.lastSequence();

    await recoverAdmin(w.deps, issueToken("t1"));

    expect((await w.instanceMembership(w.adminId))?.roles).toEqual(["IAM_OWNER"]);
    expect(await w.store.findTokenById(fromViewer)).toBeUndefined();
    expect(await w.store.findTokenById(fromOwner)).toBeDefined();
    expect((await instanceRolesOf(w, w.adminToken)).roles).toEqual(["IAM_OWNER"]);
    const events = await w.eventsAfter(before);
    expect(events.map((e) => e.type)).toEqual(["user.pat.removed", "instance.member.added", "user.pat.added", "instance.admin.recovered"]);
    expect(events[0]).toEqual({ type: "user.pat.removed", payload: { tokenId: fromViewer, reason: "issuer_below_new_role", issuerUserId: "viewer-id" }, actor: "system", resourceOwner: w.instance.defaultOrgId });
    expect(events[1]?.resourceOwner).toBe(w.instance.id);
  });

  it("admin user gone altogether: re-created as an active machine user `admin` of the first organization, holding IAM_OWNER", async () => {
    const w = await world();
    const memberships = await w.store.listMembershipsOfUser(w.adminId);
    await w.write({ kind: "token.deleteOfUser", userId: w.adminId }, ...memberships.map((m): RowWrite => ({ kind: "membership.delete", id: m.id })), { kind: "user.delete", id: w.adminId });
    const before = await w.lastSequence();

    const result = await recoverAdmin(w.deps, issueToken("t1"));

    expect(result).toMatchObject({ adminUserId: "recover-1", userCreated: true });
    expect(await w.store.findUserById("recover-1")).toMatchObject({
      instanceId: w.instance.id,
      orgId: w.instance.defaultOrgId,
      type: "machine",
      state: "active",
      userName: "admin",
      userNameKey: "admin",
      machineName: "Administrator",
      machineDescription: "Re-created by gatehouse recover-admin; holds IAM_OWNER.",
    });
    expect(await instanceRolesOf(w, result.token)).toEqual({ userId: "recover-1", roles: ["IAM_OWNER"] });
    expect((await w.eventsAfter(before)).map((e) => [e.type, e.payload, e.resourceOwner])).toEqual([
      ["user.machine.added", { userName: "admin", name: "Administrator" }, w.instance.defaultOrgId],
      ["instance.member.added", { userId: "recover-1", roles: ["IAM_OWNER"], level: "instance", scopeId: w.instance.id }, w.instance.id],
      ["user.pat.added", { tokenId: "t1", expirationDate: null }, w.instance.defaultOrgId],
      ["instance.admin.recovered", { userId: "recover-1", tokenId: "t1", userCreated: true }, w.instance.id],
    ]);
  });

  it("admin without any instance role: a token an organization owner issued for it is revoked too (ORG_OWNER could not grant IAM_OWNER)", async () => {
    const w = await world();
    await w.write({ kind: "membership.delete", id: ((await w.instanceMembership(w.adminId)) as MembershipRow).id });
    const fromOrgOwner = await tokenIssuedForAdminBy(w, "org-owner", []);
    await w.write({ kind: "membership.insert", row: { id: "org-owner-membership", userId: "org-owner-id", level: "org", scopeId: w.instance.defaultOrgId, ownerOrgId: w.instance.defaultOrgId, projectId: null, roles: ["ORG_OWNER"] } });
    const before = await w.lastSequence();

    const result = await recoverAdmin(w.deps, issueToken("t1"));

    expect(await w.store.findTokenById(fromOrgOwner)).toBeUndefined();
    expect(await instanceRolesOf(w, result.token)).toEqual({ userId: w.adminId, roles: ["IAM_OWNER"] });
    expect((await w.eventsAfter(before)).map((e) => [e.type, e.payload])).toEqual([
      ["user.pat.removed", { tokenId: fromOrgOwner, reason: "issuer_below_new_role", issuerUserId: "org-owner-id" }],
      ["instance.member.added", { userId: w.adminId, roles: ["IAM_OWNER"], level: "instance", scopeId: w.instance.id }],
      ["user.pat.added", { tokenId: "t1", expirationDate: null }],
      ["instance.admin.recovered", { userId: w.adminId, tokenId: "t1", userCreated: false }],
    ]);
  });

  it("records each event on the object it is about: the user, its new membership, the instance", async () => {
    const w = await world();
    await w.write({ kind: "membership.delete", id: ((await w.instanceMembership(w.adminId)) as MembershipRow).id });
    const fromViewer = await tokenIssuedForAdminBy(w, "viewer", ["IAM_OWNER_VIEWER"]);
    const before = await w.lastSequence();

    await recoverAdmin(w.deps, issueToken("t1"));

    const membership = (await w.instanceMembership(w.adminId)) as MembershipRow;
    expect(await w.aggregatesAfter(before)).toEqual([
      ["user.pat.removed", "user", w.adminId],
      ["instance.member.added", "member", membership.id],
      ["user.pat.added", "user", w.adminId],
      ["instance.admin.recovered", "instance", w.instance.id],
    ]);
    expect(await w.store.findTokenById(fromViewer)).toBeUndefined();
  });

  it("records the re-created admin's events on the new user, its membership and the instance", async () => {
    const w = await world();
    const memberships = await w.store.listMembershipsOfUser(w.adminId);
    await w.write({ kind: "token.deleteOfUser", userId: w.adminId }, ...memberships.map((m): RowWrite => ({ kind: "membership.delete", id: m.id })), { kind: "user.delete", id: w.adminId });
    const before = await w.lastSequence();

    const result = await recoverAdmin(w.deps, issueToken("t1"));

    const membership = (await w.instanceMembership(result.adminUserId)) as MembershipRow;
    expect(await w.aggregatesAfter(before)).toEqual([
      ["user.machine.added", "user", result.adminUserId],
      ["instance.member.added", "member", membership.id],
      ["user.pat.added", "user", result.adminUserId],
      ["instance.admin.recovered", "instance", w.instance.id],
    ]);
  });

  it("is one transaction: when its commit fails (a token id already taken), no user, role or event is left behind", async () => {
    const w = await world();
    const memberships = await w.store.listMembershipsOfUser(w.adminId);
    await w.write({ kind: "token.deleteOfUser", userId: w.adminId }, ...memberships.map((m): RowWrite => ({ kind: "membership.delete", id: m.id })), { kind: "user.delete", id: w.adminId });
    // Another user holds a token whose id the recovery's token will collide with.
    await w.write(
      { kind: "user.insert", row: { id: "keeper-id", instanceId: w.instance.id, orgId: w.instance.defaultOrgId, type: "machine", state: "active", userName: "keeper", userNameKey: "keeper", machineName: "k", machineDescription: "" } },
      { kind: "token.insert", row: { id: "taken-token-id", userId: "keeper-id", secretHash: "x", expiresAt: null, createdAt: 0, issuerUserId: null } },
    );
    const before = await w.lastSequence();

    await expect(recoverAdmin(w.deps, issueToken("taken-token-id"))).rejects.toThrow();

    expect(await w.store.listUsers({ instanceId: w.instance.id, orgId: w.instance.defaultOrgId, userNameKey: "admin", limit: 1 })).toEqual([]);
    expect(await w.store.listMembershipsOfScope("instance", w.instance.id)).toEqual([]);
    expect(await w.eventsAfter(before)).toEqual([]);
  });
});
