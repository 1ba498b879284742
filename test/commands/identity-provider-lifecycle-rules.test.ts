import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { removeIdentityProvider } from "../../src/commands/identity-provider-lifecycle.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, race, racingDeps, typed } from "./rules-support.js";

/**
 * RemoveIdentityProvider: removing one that is gone is idp.not_found (identity_provider.proto), also
 * when another removal committed between this one's reads and its commit; a removal that finds a user
 * linked since its reads is refused whole (aborted), so no link ever names a removed IDP.
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;
let idpCount = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "IDP rules" }));
  caller = await adminCaller(t, orgId);
});

const idps = () => t.clients.client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId });

async function newIdp(): Promise<string> {
  idpCount += 1;
  return (await idps().createIdentityProvider({ name: `SSO ${idpCount}`, issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret-value" })).idpId;
}

describe("IDP removals that lose a race", () => {
  it("of two concurrent removals one wins; the other is idp.not_found naming the IDP, and one event is appended", async () => {
    const idpId = await newIdp();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeIdentityProvider(deps, caller, idpId)));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "idp.not_found", metadata: { idpId } }]);
    expect(await eventTypesOf(t, "idp", idpId)).toEqual(["idp.added", "idp.removed"]);
  });

  it("a removal that finds a user linked since its reads is aborted whole: the IDP and the link stay", async () => {
    const idpId = await newIdp();
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
    let userId = "";
    const deps = interleavedDeps(t, async () => {
      ({ userId } = await users.createHumanUser({
        userName: `linked-late-${idpCount}`,
        profile: { firstName: "Late", lastName: "Link" },
        email: { email: `linked-late-${idpCount}@example.com`, isEmailVerified: true },
        idps: [{ configId: idpId, externalUserId: "ext-late" }],
      }));
    });
    const error = await removeIdentityProvider(deps, caller, idpId).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    expect((await idps().getIdentityProvider({ idpId })).idp?.idpId).toBe(idpId);
    expect(await eventTypesOf(t, "idp", idpId)).toEqual(["idp.added"]);
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type === "user.idp_link.removed")).toEqual([]);
    // The retry sees the link and removes it with the IDP.
    await idps().removeIdentityProvider({ idpId });
    expect((await eventTypesOf(t, "user", userId)).filter((type) => type === "user.idp_link.removed")).toHaveLength(1);
    expect((await failure(idps().getIdentityProvider({ idpId }))).code).toBe(Code.NotFound);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the IDP meanwhile", async () => {
    const idpId = await newIdp();
    const deps = busyDeps(t, () => idps().removeIdentityProvider({ idpId }));
    const error = await removeIdentityProvider(deps, caller, idpId).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });
});
