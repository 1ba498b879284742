import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { authenticate } from "../../src/access/authenticate.js";
import { DomainError } from "../../src/domain/errors.js";
import { interleavedDeps, typed } from "../commands/rules-support.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/**
 * A refused token explains itself to its holder (src/access/authenticate.ts; API.md "Errors": a clear message that
 * says what is wrong): an expired token says it has expired, a token of a deactivated organization's user says the
 * organization is deactivated — over every protocol, beside the reason a program branches on. A token whose user is
 * removed while the call authenticates (after the token was read, before its user) is just an invalid token.
 */
const t = useTestServer();
let count = 0;

const orgs = () => t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });

async function actorInNewOrganization(name: string) {
  count += 1;
  const { organizationId } = await orgs().createOrganization({ name: `${name} ${count}` });
  return { organizationId, actor: await createActor(t.clients, t.server.adminToken, organizationId, `${name}-${count}`) };
}

describe.each(PROTOCOLS)("over %s", (protocol) => {
  it("an expired token is auth.token_expired, and its message says the token has expired", async () => {
    const { organizationId, actor } = await actorInNewOrganization("expiry");
    const admin = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: organizationId });
    const { token } = await admin.addPersonalAccessToken({
      userId: actor.userId,
      expirationDate: timestampFromDate(new Date(t.server.clock.now().getTime() + 60_000)),
    });
    const asHolder = t.clients.client(UserService, protocol, { token });
    t.server.clock.advance(60_000);
    try {
      const error = await failure(asHolder.getUser({ userId: actor.userId }));
      expect(error).toMatchObject({ code: Code.Unauthenticated, reason: "auth.token_expired" });
      expect(error.message).toMatch(/expired/i);
    } finally {
      t.server.clock.advance(-60_000);
    }
  });

  it("a token of a deactivated organization's user is organization.inactive, and its message says the organization is deactivated", async () => {
    const { organizationId, actor } = await actorInNewOrganization("deactivated");
    await orgs().deactivateOrganization({ organizationId });
    const error = await failure(t.clients.client(UserService, protocol, { token: actor.token }).getUser({ userId: actor.userId }));
    expect(error).toMatchObject({ code: Code.Unauthenticated, reason: "organization.inactive" });
    expect(error.message).toMatch(/organization/i);
    expect(error.message).toMatch(/deactivated|inactive/i);
  });
});

describe("a token that makes no caller", () => {
  it("unknown, malformed or with a wrong secret: auth.token_invalid, and its message says the token is not valid", async () => {
    const { actor } = await actorInNewOrganization("invalid");
    for (const token of ["not-a-token", `${actor.token}x`, actor.token.replace(/.$/, (c) => (c === "a" ? "b" : "a"))]) {
      const error = await failure(t.clients.client(UserService, "connect-json-http1", { token }).getUser({ userId: actor.userId }));
      expect({ token, code: error.code, reason: error.reason, message: error.message }).toEqual({ token, code: Code.Unauthenticated, reason: "auth.token_invalid", message: expect.stringMatching(/token is not valid/) });
    }
  });
});

describe("a token whose user is removed while the call authenticates", () => {
  it("is auth.token_invalid, never an internal error", async () => {
    const { organizationId, actor } = await actorInNewOrganization("removed");
    const admin = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: organizationId });
    const deps = interleavedDeps(t, () => admin.removeUser({ userId: actor.userId }), "findUserById");
    const error = await authenticate(deps, `Bearer ${actor.token}`).then(
      () => expect.fail("the token of a removed user was accepted"),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect(typed(error as DomainError)).toEqual({ kind: "unauthenticated", reason: "auth.token_invalid", metadata: {} });
    expect((await failure(t.clients.client(UserService, "connect-json-http1", { token: actor.token }).getUser({ userId: actor.userId }))).reason).toBe("auth.token_invalid");
  });
});
