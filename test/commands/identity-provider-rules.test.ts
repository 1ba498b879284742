import { beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { useTestServer } from "../support/server.js";

/**
 * CreateIdentityProvider's scopes (identity_provider.proto): "Scopes requested from the provider;
 * default `openid profile email`". Given scopes are kept as given (each once, in order), not replaced.
 */
const t = useTestServer();
let orgId: string;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "IDP scope rules" }));
});

const idps = () => t.clients.client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId });
const create = (name: string, scopes: string[]) => idps().createIdentityProvider({ name, issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret-value", scopes });

describe("the scopes of a new identity provider", () => {
  it("are the given ones, each once and in the order given", async () => {
    const { idpId } = await create("Scoped", ["openid", "groups", "openid", "offline_access"]);
    expect((await idps().getIdentityProvider({ idpId })).idp?.scopes).toEqual(["openid", "groups", "offline_access"]);
  });

  it("are openid profile email when none are given", async () => {
    const { idpId } = await create("Default scopes", []);
    expect((await idps().getIdentityProvider({ idpId })).idp?.scopes).toEqual(["openid", "profile", "email"]);
  });
});
