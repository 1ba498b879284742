import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { authenticate } from "../../src/access/authenticate.js";
import { removePersonalAccessToken } from "../../src/commands/personal-access-token.js";
import type { Caller } from "../../src/context.js";
import { DomainError } from "../../src/domain/errors.js";
import { listPersonalAccessTokens } from "../../src/queries/personal-access-token.js";
import { interleavedDeps, typed } from "../commands/rules-support.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/**
 * A user acting on its own tokens (src/access/select-user.ts selectSelfOrManagedUser; user.proto: "A user may always
 * list / remove its own tokens"): the user and its organization are the ones it authenticated as. A user removed
 * while its own call is under way — after the call authenticated it, before the call looked it up — gets the
 * documented miss, not_found `user.not_found` with metadata `userId` (README "Errors"), never an internal error.
 * Its own token removal reports, as every write does, the organization the object belongs to (`resourceOwner`,
 * SPEC "details").
 */
const t = useTestServer();
let orgId: string;
let count = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Self selection" }));
});

const admin = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });

/** A user without roles and its token, and the principal its next call authenticates as. */
async function selfCaller(): Promise<{ userId: string; tokenId: string; caller: Caller }> {
  count += 1;
  const actor = await createActor(t.clients, t.server.adminToken, orgId, `self-${count}`);
  const principal = await authenticate(t.server.gatehouse.deps, `Bearer ${actor.token}`);
  return { userId: actor.userId, tokenId: principal.tokenId, caller: { principal, requestedOrgId: undefined } };
}

async function refusal(call: Promise<unknown>): Promise<DomainError> {
  const error = await call.then(
    () => expect.fail("the call succeeded for a user that is gone"),
    (e: unknown) => e,
  );
  expect(error, "a removed user is a typed miss, never an internal error").toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe("a user removed after its own call authenticated it", () => {
  it("listing its own tokens is user.not_found naming the user", async () => {
    const { userId, caller } = await selfCaller();
    const deps = interleavedDeps(t, () => admin().removeUser({ userId }), "findUserById");
    const error = await refusal(listPersonalAccessTokens(deps, caller, { userId, pageSize: 10, pageToken: "" }));
    expect(typed(error)).toEqual({ kind: "not_found", reason: "user.not_found", metadata: { userId } });
  });

  it("removing its own token is user.not_found naming the user", async () => {
    const { userId, tokenId, caller } = await selfCaller();
    const deps = interleavedDeps(t, () => admin().removeUser({ userId }), "findUserById");
    const error = await refusal(removePersonalAccessToken(deps, caller, { userId, tokenId }));
    expect(typed(error)).toEqual({ kind: "not_found", reason: "user.not_found", metadata: { userId } });
    expect(await failure(admin().getUser({ userId }))).toMatchObject({ code: Code.NotFound, reason: "user.not_found" });
  });
});

describe("a user removing its own token", () => {
  it("gets details whose resourceOwner is its organization", async () => {
    count += 1;
    const actor = await createActor(t.clients, t.server.adminToken, orgId, `self-remover-${count}`);
    const { tokenId } = await admin().addPersonalAccessToken({ userId: actor.userId });
    const asSelf = t.clients.client(UserService, "connect-json-http1", { token: actor.token });
    const { details } = await asSelf.removePersonalAccessToken({ userId: actor.userId, tokenId });
    expect(details?.resourceOwner).toBe(orgId);
    expect((await admin().listPersonalAccessTokens({ userId: actor.userId })).tokens.map((token) => token.tokenId)).not.toContain(tokenId);
  });
});
