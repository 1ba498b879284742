import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService, UserState } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { changeUserState, removeUser } from "../../src/commands/user-lifecycle.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, race, racingDeps, typed } from "./rules-support.js";

/**
 * User state changes and removals that lose a race answer as the call after the winner would
 * (user.proto: already_locked, not_found "removing a user that is already removed"); a removal that
 * finds a membership added since its reads is refused whole, so no membership names a removed user.
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;
let userCount = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "User rules" }));
  caller = await adminCaller(t, orgId);
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });

async function newUser(): Promise<string> {
  userCount += 1;
  return (await users().createMachineUser({ userName: `lifecycle-${userCount}`, name: "Racer" })).userId;
}

describe("user changes that lose a race", () => {
  it("of two concurrent locks one wins; the other is user.already_locked, and one event is appended", async () => {
    const userId = await newUser();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => changeUserState(deps, caller, userId, "lock")));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "failed_precondition", reason: "user.already_locked", metadata: {} }]);
    expect((await users().getUser({ userId })).user?.state).toBe(UserState.LOCKED);
    expect(await eventTypesOf(t, "user", userId)).toEqual(["user.machine.added", "user.locked"]);
  });

  it("a deactivation that loses to the user's removal is user.not_found naming the user, and appends nothing", async () => {
    const userId = await newUser();
    const deps = interleavedDeps(t, () => users().removeUser({ userId }));
    const error = await changeUserState(deps, caller, userId, "deactivate").catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "not_found", reason: "user.not_found", metadata: { userId } });
    expect(await eventTypesOf(t, "user", userId)).toEqual(["user.machine.added", "user.removed"]);
  });

  it("of two concurrent removals one wins; the other is user.not_found (removed already)", async () => {
    const userId = await newUser();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeUser(deps, caller, userId)));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "user.not_found", metadata: { userId } }]);
    expect((await failure(users().getUser({ userId }))).code).toBe(Code.NotFound);
    expect(await eventTypesOf(t, "user", userId)).toEqual(["user.machine.added", "user.removed"]);
  });

  it("a removal that finds an organization membership added since its reads is aborted whole: the user and the membership stay", async () => {
    const userId = await newUser();
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
    const deps = interleavedDeps(t, () => orgs.addOrganizationMember({ userId, roles: ["ORG_USER_MANAGER"] }));
    const error = await removeUser(deps, caller, userId).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    expect((await users().getUser({ userId })).user?.state).toBe(UserState.ACTIVE);
    const { members } = await orgs.listOrganizationMembers({});
    expect(members.filter((m) => m.userId === userId).map((m) => m.roles)).toEqual([["ORG_USER_MANAGER"]]);
    expect(await eventTypesOf(t, "user", userId)).toEqual(["user.machine.added"]);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the user meanwhile", async () => {
    const userId = await newUser();
    const deps = busyDeps(t, () => users().removeUser({ userId }));
    const error = await changeUserState(deps, caller, userId, "lock").catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });
});
