import { Code } from "@connectrpc/connect";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { createPrincipalCache } from "../../src/access/principal-cache.js";
import { selectOrganization } from "../../src/access/select-organization.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { changesAccess, type Commit, type RowWrite } from "../../src/store/commit.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

// Principals are cached (issue 12: an authenticated call must not read its token, user, organization and memberships
// every time), and a change of rights is obeyed by the very next call (API.md: a removed role, token, lock or
// deactivation takes effect at once). Each test first makes a call, so the actor's principal is cached, then
// changes its rights through the API and checks the next call.
const t = useTestServer();
let count = 0;

async function freshOrganization() {
  count += 1;
  const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: `Cache ${count}` });
  return organizationId;
}
const admin = (orgId: string) => ({ token: t.server.adminToken, orgId });
const createProject = (token: string) => t.clients.client(ProjectService, "connect-json-http1", { token }).createProject({ name: `P ${++count}` });
const getUser = (token: string, userId: string) => t.clients.client(UserService, "connect-proto-h2c", { token }).getUser({ userId });

describe("a change of rights is obeyed by the very next call, though principals are cached", () => {
  it("a role granted, then removed", async () => {
    const orgId = await freshOrganization();
    const actor = await createActor(t.clients, t.server.adminToken, orgId, `cache-role-${count}`);
    expect((await failure(createProject(actor.token))).code).toBe(Code.PermissionDenied);
    await t.clients.client(OrganizationService, "connect-json-http1", admin(orgId)).addOrganizationMember({ userId: actor.userId, roles: ["ORG_OWNER"] });
    await createProject(actor.token);
    await t.clients.client(OrganizationService, "connect-json-http1", admin(orgId)).removeOrganizationMember({ userId: actor.userId });
    expect((await failure(createProject(actor.token))).code).toBe(Code.PermissionDenied);
  });

  it("a token removed", async () => {
    const orgId = await freshOrganization();
    const actor = await createActor(t.clients, t.server.adminToken, orgId, `cache-token-${count}`, ["ORG_OWNER"]);
    await getUser(actor.token, actor.userId);
    const users = t.clients.client(UserService, "connect-json-http1", admin(orgId));
    const { tokens } = await users.listPersonalAccessTokens({ userId: actor.userId });
    await users.removePersonalAccessToken({ userId: actor.userId, tokenId: tokens[0]!.tokenId });
    expect(await failure(getUser(actor.token, actor.userId))).toMatchObject({ code: Code.Unauthenticated, reason: "auth.token_invalid" });
  });

  it("a user deactivated, then reactivated; locked, then unlocked", async () => {
    const orgId = await freshOrganization();
    const actor = await createActor(t.clients, t.server.adminToken, orgId, `cache-state-${count}`, ["ORG_OWNER"]);
    const users = t.clients.client(UserService, "connect-json-http1", admin(orgId));
    await getUser(actor.token, actor.userId);
    await users.deactivateUser({ userId: actor.userId });
    expect(await failure(getUser(actor.token, actor.userId))).toMatchObject({ code: Code.Unauthenticated, reason: "user.inactive" });
    await users.reactivateUser({ userId: actor.userId });
    await getUser(actor.token, actor.userId);
    await users.lockUser({ userId: actor.userId });
    expect(await failure(getUser(actor.token, actor.userId))).toMatchObject({ code: Code.Unauthenticated, reason: "user.locked" });
    await users.unlockUser({ userId: actor.userId });
    await getUser(actor.token, actor.userId);
  });

  it("the user's organization deactivated", async () => {
    const orgId = await freshOrganization();
    const actor = await createActor(t.clients, t.server.adminToken, orgId, `cache-org-${count}`, ["ORG_OWNER"]);
    await getUser(actor.token, actor.userId);
    await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).deactivateOrganization({ organizationId: orgId });
    expect(await failure(getUser(actor.token, actor.userId))).toMatchObject({ code: Code.Unauthenticated, reason: "organization.inactive" });
  });

  it("the user removed", async () => {
    const orgId = await freshOrganization();
    const actor = await createActor(t.clients, t.server.adminToken, orgId, `cache-removed-${count}`);
    expect((await failure(createProject(actor.token))).code).toBe(Code.PermissionDenied);
    await t.clients.client(UserService, "connect-json-http1", admin(orgId)).removeUser({ userId: actor.userId });
    expect(await failure(createProject(actor.token))).toMatchObject({ code: Code.Unauthenticated, reason: "auth.token_invalid" });
  });
});

describe("the caller's own organization", () => {
  // Authentication read (or cached) the caller's organization to make its principal, and a call in that organization
  // uses that row: an authenticated read costs no organization read of its own (issue 12). Another organization, named
  // by x-service-orgid, is read for its call.
  it("is not read again by a call in it; another organization named by x-service-orgid is", async () => {
    const orgId = await freshOrganization();
    const otherOrgId = await freshOrganization();
    const actor = await createActor(t.clients, t.server.adminToken, orgId, `cache-own-org-${count}`, ["ORG_OWNER"]);
    await t.clients.client(OrganizationService, "connect-json-http1", admin(otherOrgId)).addOrganizationMember({ userId: actor.userId, roles: ["ORG_OWNER"] });
    const { projectId } = await createProject(actor.token);
    const store = t.server.gatehouse.deps.store;
    // Authentication reads the organization again only with the token (its cached principal dropped by a change of
    // access somewhere): every organization read beyond those is the call's own.
    const tokenReads = vi.spyOn(store, "findTokenById");
    const organizationReads = vi.spyOn(store, "findOrganizationById");
    const readsOfOther = () => organizationReads.mock.calls.filter(([id]) => id === otherOrgId).length;
    try {
      const projects = (named?: string) => t.clients.client(ProjectService, "connect-json-http1", { token: actor.token, ...(named ? { orgId: named } : {}) });
      await projects().getProject({ projectId });
      await projects(orgId).getProject({ projectId });
      expect(organizationReads.mock.calls).toEqual(tokenReads.mock.calls.map(() => [orgId]));
      await projects(otherOrgId).listProjects({});
      expect(readsOfOther()).toBe(1);
      expect(organizationReads).toHaveBeenCalledTimes(tokenReads.mock.calls.length + 1);
    } finally {
      tokenReads.mockRestore();
      organizationReads.mockRestore();
    }
  });
});

describe("a caller's organization row from authentication", () => {
  // selectOrganization takes the row that came with the caller only for the principal's own organization: a caller
  // rebuilt around another principal (naming that organization by x-service-orgid) reads it afresh.
  it("serves the principal's own organization only", async () => {
    const orgId = await freshOrganization();
    await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).deactivateOrganization({ organizationId: orgId });
    const deps = t.server.gatehouse.deps;
    const stale = { ...(await deps.store.findOrganizationById(orgId))!, state: "active" as const };
    const owner = { level: "org" as const, scopeId: orgId, ownerOrgId: orgId, roles: ["ORG_OWNER"] };
    const principal = { userId: "u", orgId, instanceId: stale.instanceId, tokenId: "t", memberships: [owner] };
    expect((await selectOrganization(deps, { principal, requestedOrgId: undefined, ownOrganization: stale })).state).toBe("active");
    const rebuilt = { principal: { ...principal, orgId: "another-organization" }, requestedOrgId: orgId, ownOrganization: stale };
    await expect(selectOrganization(deps, rebuilt)).rejects.toMatchObject({ reason: "organization.inactive" });
  });
});

describe("the principal cache", () => {
  let dir: string;
  let store: Store;
  let reads: string[];
  const at = new Date("2026-01-01T00:00:00Z");
  const commit = (writes: RowWrite[]): Commit => ({ instanceId: "i1", actor: "tester", at, writes, events: [] });
  const machineUser = (id: string): RowWrite => ({
    kind: "user.insert",
    row: { id, instanceId: "i1", orgId: "o1", type: "machine", state: "active", userName: id, userNameKey: id, machineName: "m", machineDescription: "" },
  });
  const token = (id: string, userId: string): RowWrite => ({ kind: "token.insert", row: { id, userId, secretHash: "h", expiresAt: null, createdAt: 0, issuerUserId: null } });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-principal-cache-"));
    const real = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "NORMAL", busyTimeoutMs: 1000 });
    reads = [];
    store = new Proxy(real, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof key === "string" && key.startsWith("find") && typeof value === "function") {
          return (...args: unknown[]) => {
            reads.push(key);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    await store.commit(
      commit([
        { kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } },
        { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } },
        machineUser("u1"),
        machineUser("u2"),
        token("t1", "u1"),
        token("t2", "u2"),
      ]),
    );
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("reads a token's rows once, then answers from memory until a change of access", async () => {
    const load = createPrincipalCache(store);
    expect((await load("t1")).user?.id).toBe("u1");
    const afterFirst = reads.length;
    expect(afterFirst).toBeGreaterThan(0);
    expect((await load("t1")).user?.id).toBe("u1");
    expect(reads.length).toBe(afterFirst);
    // A write that changes no principal keeps the entry; one that may drops it.
    await store.commit(commit([machineUser("u3")]));
    await load("t1");
    expect(reads.length).toBe(afterFirst);
    await store.commit(commit([{ kind: "user.setLocked", id: "u1", locked: true }]));
    expect((await load("t1")).user?.locked).toBe(true);
    expect(reads.length).toBeGreaterThan(afterFirst);
  });

  const member = (id: string, userId: string): RowWrite => ({
    kind: "membership.insert",
    row: { id, userId, level: "org", scopeId: "o1", ownerOrgId: "o1", projectId: null, roles: ["ORG_OWNER"] },
  });
  /** Whether `load("t1")` (user u1) read the store again after `writes` were committed. */
  async function rereadAfter(load: ReturnType<typeof createPrincipalCache>, writes: RowWrite[]) {
    await load("t1");
    reads = [];
    await store.commit(commit(writes));
    const rows = await load("t1");
    return { reread: reads.length > 0, rows };
  }

  it("keeps a user's principal across changes of other users' principals, and drops it for its own", async () => {
    const load = createPrincipalCache(store);
    expect((await rereadAfter(load, [member("m2", "u2")])).reread).toBe(false);
    expect((await rereadAfter(load, [{ kind: "user.setLocked", id: "u2", locked: true }])).reread).toBe(false);
    expect((await rereadAfter(load, [{ kind: "token.deleteOfUser", userId: "u2" }])).reread).toBe(false);
    const granted = await rereadAfter(load, [member("m1", "u1")]);
    expect(granted.rows.memberships.map((m) => m.id)).toEqual(["m1"]);
    expect((await rereadAfter(load, [{ kind: "user.setInactive", id: "u1", inactive: true }])).rows.user?.inactive).toBe(true);
    expect((await rereadAfter(load, [{ kind: "token.deleteOfUser", userId: "u1" }])).rows.token).toBeUndefined();
  });

  it("drops every principal for a change that names no user: an organization's state, a removed membership or token", async () => {
    const load = createPrincipalCache(store);
    await store.commit(commit([member("m2", "u2"), member("m1", "u1")]));
    expect((await rereadAfter(load, [{ kind: "membership.delete", id: "m2" }])).reread).toBe(true);
    expect((await rereadAfter(load, [{ kind: "token.delete", id: "t2" }])).reread).toBe(true);
    expect((await rereadAfter(load, [{ kind: "organization.setState", id: "o1", state: "inactive" }])).rows.organization?.state).toBe("inactive");
  });

  it("does not keep rows read while a change of access was committed: the next call reads them again", async () => {
    const load = createPrincipalCache(store);
    // The change lands between the read of the token and that of its user, so the rows may predate it.
    const findUserById = store.findUserById.bind(store);
    let changed = false;
    const racing = new Proxy(store, {
      get(target, key, receiver) {
        if (key !== "findUserById") return Reflect.get(target, key, receiver) as unknown;
        return async (id: string) => {
          const row = await findUserById(id);
          if (!changed) {
            changed = true;
            await store.commit(commit([{ kind: "user.setLocked", id: "u1", locked: true }]));
          }
          return row;
        };
      },
    });
    const loadRacing = createPrincipalCache(racing);
    expect((await loadRacing("t1")).user?.locked).toBe(false);
    expect((await loadRacing("t1")).user?.locked).toBe(true);
    expect((await load("t1")).user?.locked).toBe(true);
  });

  it("drops its entries when another process wrote to the database (recover-admin works beside a running server)", async () => {
    const load = createPrincipalCache(store);
    expect((await load("t1")).user?.locked).toBe(false);
    const other = new Database(join(dir, "db.sqlite"));
    try {
      other.prepare("UPDATE users SET locked = 1 WHERE id = 'u1'").run();
    } finally {
      other.close();
    }
    // The next call starts in a later turn of the event loop (the store's reads of one turn share a snapshot).
    await new Promise((resolve) => setImmediate(resolve));
    expect((await load("t1")).user?.locked).toBe(true);
  });

  it("keeps no entry for a token it did not find (any caller could fill memory with made-up ids)", async () => {
    const load = createPrincipalCache(store);
    await load("unknown");
    await load("unknown");
    expect(reads.filter((name) => name === "findTokenById")).toHaveLength(2);
  });

  it("keeps at most maxEntries tokens, dropping the least recently used", async () => {
    const load = createPrincipalCache(store, 1);
    await load("t1");
    await load("t2");
    reads = [];
    await load("t2");
    expect(reads).toEqual([]);
    await load("t1");
    expect(reads).toContain("findTokenById");
  });
});

describe("which commits change access", () => {
  const of = (...writes: RowWrite[]): Commit => ({ instanceId: "i1", actor: "a", at: new Date(0), writes, events: [] });
  it.each<[string, RowWrite]>([
    ["a user locked", { kind: "user.setLocked", id: "u", locked: true }],
    ["a user deactivated", { kind: "user.setInactive", id: "u", inactive: true }],
    ["a user removed", { kind: "user.delete", id: "u" }],
    ["a token removed", { kind: "token.delete", id: "t" }],
    ["a user's tokens removed", { kind: "token.deleteOfUser", userId: "u" }],
    ["a membership removed", { kind: "membership.delete", id: "m" }],
    ["an organization's state", { kind: "organization.setState", id: "o", state: "inactive" }],
  ])("%s does", (_name, write) => {
    expect(changesAccess(of({ kind: "application.rename", id: "a", name: "n", nameKey: "n" }, write))).toBe(true);
  });

  it.each<[string, RowWrite]>([
    ["an application renamed", { kind: "application.rename", id: "a", name: "n", nameKey: "n" }],
    ["a project renamed", { kind: "project.rename", id: "p", name: "n", nameKey: "n" }],
    ["an outbox message sent", { kind: "outbox.sent", id: "m", attempts: 1 }],
  ])("%s does not", (_name, write) => {
    expect(changesAccess(of(write))).toBe(false);
  });
});
