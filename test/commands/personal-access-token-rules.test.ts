import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { addOrganizationMember } from "../../src/commands/organization.js";
import { removePersonalAccessToken } from "../../src/commands/personal-access-token.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, race, racingDeps, typed } from "./rules-support.js";

/**
 * RemovePersonalAccessToken: a token removed already is token.not_found (user.proto), also when the
 * other removal committed between this one's reads and its commit; the token stops working either way.
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;
let userCount = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Token rules" }));
  caller = await adminCaller(t, orgId);
});

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });

async function userWithToken(): Promise<{ userId: string; tokenId: string; token: string }> {
  userCount += 1;
  const { userId } = await users().createMachineUser({ userName: `token-holder-${userCount}`, name: "Holder" });
  const { tokenId, token } = await users().addPersonalAccessToken({ userId });
  return { userId, tokenId, token };
}

describe("token removals that lose a race", () => {
  it("of two concurrent removals one wins; the other is token.not_found naming the token, and one event is appended", async () => {
    const { userId, tokenId, token } = await userWithToken();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removePersonalAccessToken(deps, caller, { userId, tokenId })));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "token.not_found", metadata: { tokenId } }]);
    expect((await users().listPersonalAccessTokens({ userId })).tokens).toEqual([]);
    const asHolder = t.clients.client(UserService, "connect-json-http1", { token });
    expect((await failure(asHolder.getUser({ userId }))).code).toBe(Code.Unauthenticated);
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type === "user.pat.removed")).toHaveLength(1);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), not as token.not_found, and the token still works", async () => {
    const { userId, tokenId, token } = await userWithToken();
    const deps = busyDeps(t, async () => undefined);
    const error = await removePersonalAccessToken(deps, caller, { userId, tokenId }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
    const asHolder = t.clients.client(UserService, "connect-json-http1", { token });
    expect((await asHolder.getUser({ userId })).user?.userId).toBe(userId);
  });
});

describe("AddPersonalAccessToken's expiration date", () => {
  it("must lie in the future: now is invalid_argument token.expiration_past, one violation on expiration_date with that rule, and no token", async () => {
    userCount += 1;
    const { userId } = await users().createMachineUser({ userName: `token-expiry-${userCount}`, name: "Expiry" });
    const error = await failure(users().addPersonalAccessToken({ userId, expirationDate: timestampFromDate(t.server.clock.now()) }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "token.expiration_past", fields: ["expiration_date"], rules: ["token.expiration_past"] });
    expect((await users().listPersonalAccessTokens({ userId })).tokens).toEqual([]);
  });
});

/**
 * Granting roles revokes the tokens someone else issued for the user who could not grant those roles
 * (instance.proto AddInstanceMember, organization.proto): the ceiling held at issuance holds after it.
 * A token the user issued itself stays, and granting no roles guards nothing.
 */
describe("what a role grant does to the user's tokens", () => {
  it("a token the user issued itself stays when it is granted a role it did not hold then", async () => {
    userCount += 1;
    const manager = await createActor(t.clients, t.server.adminToken, orgId, `self-issuer-${userCount}`, ["ORG_USER_MANAGER"]);
    const asManager = t.clients.client(UserService, "connect-json-http1", { token: manager.token, orgId });
    const own = await asManager.addPersonalAccessToken({ userId: manager.userId });
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
    await orgs.removeOrganizationMember({ userId: manager.userId });
    await orgs.addOrganizationMember({ userId: manager.userId, roles: ["ORG_OWNER"] });
    const tokenIds = (await users().listPersonalAccessTokens({ userId: manager.userId })).tokens.map((token) => token.tokenId);
    expect(tokenIds).toContain(own.tokenId);
    const withOwn = t.clients.client(UserService, "connect-json-http1", { token: own.token, orgId });
    expect((await withOwn.getUser({ userId: manager.userId })).user?.userId).toBe(manager.userId);
  });

  it("a membership with no roles is added even when a token was issued for the user since the grant's reads", async () => {
    userCount += 1;
    const { userId } = await users().createMachineUser({ userName: `no-roles-${userCount}`, name: "No roles" });
    let issued = "";
    const deps = interleavedDeps(t, async () => {
      ({ tokenId: issued } = await users().addPersonalAccessToken({ userId }));
    });
    await addOrganizationMember(deps, caller, { userId, roles: [] });
    const { members } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId }).listOrganizationMembers({});
    expect(members.find((m) => m.userId === userId)?.roles).toEqual([]);
    expect((await users().listPersonalAccessTokens({ userId })).tokens.map((token) => token.tokenId)).toEqual([issued]);
  });
});
