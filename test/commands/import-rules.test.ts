import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { createHumanUser } from "../../src/commands/human-user.js";
import { chunksOf, type ImportItem, type ImportOptions, type ImportResult, startImport } from "../../src/commands/import-human-users.js";
import type { Caller, Deps } from "../../src/context.js";
import { DomainError, invalidArgument } from "../../src/domain/errors.js";
import type { Store } from "../../src/store/store.js";
import { authenticate } from "../../src/access/authenticate.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";
import { interleavedDeps } from "./rules-support.js";

/**
 * The import's chunks in-process (issue 14): a chunk is one commit; when another call takes one of its user names
 * between the chunk's read and its commit, the commit is refused whole — and the import answers every other user of
 * the chunk all the same, the raced one as its conflict mode says. A store that fails ends the import instead.
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;
let n = 0;
const fresh = (prefix: string) => `${prefix}-${++n}`;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Import rules" }));
  // The admin's own principal, from its token: an import asks for the caller's rights again before each message.
  caller = { principal: await authenticate(t.server.gatehouse.deps, `Bearer ${t.server.adminToken}`), requestedOrgId: orgId };
});

const input = (userName: string, externalId = "") => ({
  userName,
  profile: { firstName: "Raced", lastName: userName, nickName: "", displayName: "", preferredLanguage: "", gender: 0 },
  email: { email: `${userName}@example.com`, isEmailVerified: true },
  password: "",
  hashedPassword: "$2b$04$QP0VjXns17EhTqK9lqvYZegW1llDeoGfRN8p3CaXkofbgMJuWm8XG",
  passwordChangeRequired: false,
  requestPasswordlessRegistration: false,
  otpCode: "",
  idps: [],
  externalId,
});

/** The server's deps, with a store whose `method` runs `meanwhile` (once) before it answers. */
function depsWith(method: keyof Store, meanwhile: () => Promise<unknown>): Deps {
  const deps = t.server.gatehouse.deps;
  let ran = false;
  const store = new Proxy(deps.store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function") return value;
      if (property !== method) return value.bind(target);
      return async (...args: unknown[]) => {
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!ran) {
          ran = true;
          await meanwhile();
        }
        return result;
      };
    },
  }) as Store;
  return { ...deps, store };
}

async function importAll(deps: Deps, items: ImportItem[], options: ImportOptions, as: Caller = caller, signal?: AbortSignal): Promise<ImportResult[]> {
  const importer = await startImport(deps, as, signal);
  const results: ImportResult[] = [];
  for await (const chunk of importer.importBatch(items, options)) results.push(...chunk.results);
  return results;
}

const outcomes = (results: ImportResult[]) => results.map((r) => (r.outcome === "failed" ? `failed ${r.error.reason}` : r.outcome));

describe("a chunk raced by another call", () => {
  it.each([
    ["fail", "failed user.already_exists"],
    ["skip", "skipped"],
  ] as const)("answers every user under %s: the others created, the raced one as its conflict", async (onConflict, raced) => {
    const names = [fresh("race"), fresh("race"), fresh("race"), fresh("race"), fresh("race")];
    let racedId = "";
    // Between the chunk's read of existing users and its commit, another call creates the third user.
    const deps = depsWith("findUsersByNameKeysOrExternalIds", async () => {
      racedId = (await createHumanUser(t.server.gatehouse.deps, caller, input(names[2]!))).userId;
    });
    const results = await importAll(deps, names.map((name) => ({ input: input(name) })), { onConflict, sendInitializationMails: false });
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(outcomes(results)).toEqual(["created", "created", raced, "created", "created"]);
    if (onConflict === "skip") expect(results[2]).toMatchObject({ userId: racedId });
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
    for (const name of names) expect((await users.listUsers({ userName: name })).users).toHaveLength(1);
  });

  it("ends the import when the store fails (unavailable): no user of the chunk is answered", async () => {
    const deps = t.server.gatehouse.deps;
    const failing = new Proxy(deps.store, {
      get(target, property, receiver) {
        if (property === "commit") return async () => Promise.reject(new DomainError("unavailable", "store.unavailable", "the database cannot be reached; retry later"));
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Store;
    await expect(importAll({ ...deps, store: failing }, [{ input: input(fresh("down")) }], { onConflict: "fail", sendInitializationMails: false })).rejects.toMatchObject({
      reason: "store.unavailable",
    });
  });
});

/** The server's deps, with a store whose `method` fails with `error` (every call). */
function failingDeps(method: keyof Store, error: unknown): Deps {
  const deps = t.server.gatehouse.deps;
  const store = new Proxy(deps.store, {
    get(target, property, receiver) {
      if (property === method) return async () => Promise.reject(error);
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Store;
  return { ...deps, store };
}

describe("a failure that is not the user's own", () => {
  // A re-import reads the target's memberships (the privilege ceiling) while it plans the user.
  const reimport = async (name: string) => {
    await importAll(t.server.gatehouse.deps, [{ input: input(name) }], { onConflict: "fail", sendInitializationMails: false });
    return { input: { ...input(name), profile: { ...input(name).profile, firstName: "Again" } } };
  };

  it("the store unavailable while a re-import is planned ends the import, rather than failing that user", async () => {
    const item = await reimport(fresh("planned-down"));
    const down = new DomainError("unavailable", "store.unavailable", "the database cannot be reached; retry later");
    await expect(importAll(failingDeps("listMembershipsOfUser", down), [item], { onConflict: "update", sendInitializationMails: false })).rejects.toBe(down);
  });

  it("a fault (not a DomainError) while a re-import is planned ends the import: it is never reported as that user's error", async () => {
    const item = await reimport(fresh("planned-bug"));
    const bug = new TypeError("cannot read properties of undefined");
    await expect(importAll(failingDeps("listMembershipsOfUser", bug), [item], { onConflict: "update", sendInitializationMails: false })).rejects.toBe(bug);
  });
});

describe("the privilege ceiling of a re-import holds at its commit", () => {
  it("a user given a role above the importer's between the check and the commit is refused (principal.privileged) and not changed; the others are imported", async () => {
    const manager = await createActor(t.clients, t.server.adminToken, orgId, fresh("ceiling-manager"), ["ORG_USER_MANAGER"]);
    const managerCaller: Caller = { principal: await authenticate(t.server.gatehouse.deps, `Bearer ${manager.token}`), requestedOrgId: orgId };
    const [target, bystander] = [fresh("promoted"), fresh("bystander")];
    await importAll(t.server.gatehouse.deps, [{ input: input(target) }, { input: input(bystander) }], { onConflict: "fail", sendInitializationMails: false });
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
    const targetId = (await users.listUsers({ userName: target })).users[0]!.userId;
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
    // After the import read the target's memberships (ORG_USER_MANAGER covers a plain user), before it commits: ORG_OWNER.
    const deps = interleavedDeps(t, () => orgs.addOrganizationMember({ userId: targetId, roles: ["ORG_OWNER"] }));
    const renamed = (name: string) => ({ input: { ...input(name), profile: { ...input(name).profile, firstName: "Changed" } } });

    const results = await importAll(deps, [renamed(target), renamed(bystander)], { onConflict: "update", sendInitializationMails: false }, managerCaller);

    expect(outcomes(results)).toEqual(["failed principal.privileged", "updated"]);
    const { user } = await users.getUser({ userId: targetId });
    expect(user?.type.case === "human" && user.type.value.profile?.firstName).toBe("Raced");
  });
});

describe("rights that end between an import's start and its first message", () => {
  // A stream's first message may come long after its start (the call's permission check): the rights are asked for
  // again before every message, the first included, so the first message gets the error a new call would.
  const admin = (organizationId: string) => ({ token: t.server.adminToken, orgId: organizationId });
  const cases: [string, (actor: { userId: string }, organizationId: string) => Promise<unknown>, string][] = [
    ["whose role was removed", (actor, organizationId) => t.clients.client(OrganizationService, "connect-json-http1", admin(organizationId)).removeOrganizationMember({ userId: actor.userId }), "permission_denied"],
    ["that was deactivated", (actor, organizationId) => t.clients.client(UserService, "connect-json-http1", admin(organizationId)).deactivateUser({ userId: actor.userId }), "unauthenticated"],
    [
      "whose organization was deactivated",
      (_actor, organizationId) => t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).deactivateOrganization({ organizationId }),
      "unauthenticated",
    ],
  ];
  it.each(cases)("a caller %s imports nothing: its first message gets the error", async (_label, revoke, kind) => {
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
    const { organizationId } = await orgs.createOrganization({ name: fresh("Import revoked") });
    const manager = await createActor(t.clients, t.server.adminToken, organizationId, fresh("revoked-manager"), ["ORG_USER_MANAGER"]);
    const managerCaller: Caller = { principal: await authenticate(t.server.gatehouse.deps, `Bearer ${manager.token}`), requestedOrgId: organizationId };
    const importer = await startImport(t.server.gatehouse.deps, managerCaller);
    await revoke(manager, organizationId);
    const name = fresh("after-revoke");
    const first = importer.importBatch([{ input: input(name) }], { onConflict: "fail", sendInitializationMails: false });
    await expect(first.next()).rejects.toMatchObject({ kind });
    const users = t.clients.client(UserService, "connect-json-http1", admin(organizationId));
    expect((await users.listUsers({ userName: name })).users).toEqual([]);
  });
});

describe("an import whose call ended", () => {
  /** The server's deps, whose store runs `then` right after the first call of `method` answered. */
  const afterFirst = (method: keyof Store, then: () => void) => depsWith(method, async () => then());
  const namesIn = async (names: string[]) => {
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
    return (await Promise.all(names.map(async (name) => (await users.listUsers({ userName: name })).users.length))).reduce((a, b) => a + b, 0);
  };

  it("plans and commits no further chunk: the users of the chunks after the call ended are not created", async () => {
    // Two chunks: the repeated name starts the second one.
    const [a, b, c] = [fresh("ended"), fresh("ended"), fresh("ended")];
    const call = new AbortController();
    const committing = afterFirst("commit", () => call.abort(new Error("the client went away")));
    // Counts the chunks planned (each reads the existing users once) after the call ended.
    let plannedAfterEnd = 0;
    const store = new Proxy(committing.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property === "findUsersByNameKeysOrExternalIds" && call.signal.aborted) plannedAfterEnd += 1;
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Store;
    const deps = { ...committing, store };
    const importer = await startImport(deps, caller, call.signal);
    const items = [a, b, b, c].map((name) => ({ input: input(name) }));
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const chunk of importer.importBatch(items, { onConflict: "skip", sendInitializationMails: false })) seen.push(chunk.lastIndex);
      })(),
    ).rejects.toThrow("the client went away");
    expect(seen).toEqual([1]);
    expect(plannedAfterEnd).toBe(0);
    expect(await namesIn([a, b])).toBe(2);
    expect(await namesIn([c])).toBe(0);
  });

  it("commits nothing of the chunk it was planning when the call ended", async () => {
    const [a, b] = [fresh("ended-planning"), fresh("ended-planning")];
    const call = new AbortController();
    const deps = afterFirst("findUsersByNameKeysOrExternalIds", () => call.abort(new Error("the client went away")));
    await expect(importAll(deps, [{ input: input(a) }, { input: input(b) }], { onConflict: "fail", sendInitializationMails: false }, caller, call.signal)).rejects.toThrow(
      "the client went away",
    );
    expect(await namesIn([a, b])).toBe(0);
  });
});

describe("a lost race of a chunk of one user", () => {
  it("is that user's aborted store.condition_failed (retry), and the user is not changed", async () => {
    const manager = await createActor(t.clients, t.server.adminToken, orgId, fresh("single-manager"), ["ORG_USER_MANAGER"]);
    const managerCaller: Caller = { principal: await authenticate(t.server.gatehouse.deps, `Bearer ${manager.token}`), requestedOrgId: orgId };
    const target = fresh("single-promoted");
    const [created] = await importAll(t.server.gatehouse.deps, [{ input: input(target) }], { onConflict: "fail", sendInitializationMails: false });
    const targetId = created!.outcome === "created" ? created!.userId : "";
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
    const deps = interleavedDeps(t, () => orgs.addOrganizationMember({ userId: targetId, roles: ["ORG_OWNER"] }));
    const changed = { input: { ...input(target), profile: { ...input(target).profile, firstName: "Changed" } } };

    const [result] = await importAll(deps, [changed], { onConflict: "update", sendInitializationMails: false }, managerCaller);

    expect(result).toMatchObject({ outcome: "failed", error: { kind: "aborted", reason: "store.condition_failed" } });
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
    const { user } = await users.getUser({ userId: targetId });
    expect(user?.type.case === "human" && user.type.value.profile?.firstName).toBe("Raced");
  });
});

describe("chunks", () => {
  const rejected: ImportItem = { rejected: invalidArgument("request.invalid", "invalid request") };
  const sizes = (items: ImportItem[]) => [...chunksOf(items, 10)].map((chunk) => chunk.map((entry) => entry.index));

  it("keeps a message whole unless a user name (case-insensitively) or external id repeats; indices continue from the first", () => {
    expect(sizes([{ input: input("a", "x") }, rejected, { input: input("b", "y") }, { input: input("c") }, { input: input("d") }])).toEqual([[10, 11, 12, 13, 14]]);
    expect(sizes([{ input: input("a") }, { input: input("b") }, { input: input("A") }, { input: input("c") }])).toEqual([[10, 11], [12, 13]]);
    expect(sizes([{ input: input("a", "x") }, rejected, { input: input("b", "x") }])).toEqual([[10, 11], [12]]);
    // No external id is no repeat.
    expect(sizes([{ input: input("a", "") }, { input: input("b", "") }])).toEqual([[10, 11]]);
    expect(sizes([])).toEqual([]);
  });
});
