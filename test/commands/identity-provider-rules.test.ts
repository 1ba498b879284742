import { beforeAll, describe, expect, it } from "vitest";
import { IdentityProviderService, StylingType } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { useTestServer } from "../support/server.js";
import { eventTypesOf } from "./rules-support.js";

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

/**
 * UpdateIdentityProvider replaces name, styling type and auto-register (SPEC 4.3); API.md "Updates are
 * idempotent": a replacement that changes nothing appends no event, one that changes any field is a change.
 */
describe("an UpdateIdentityProvider that changes one field", () => {
  const replaceWith = async (name: string, change: { stylingType: StylingType; autoRegister: boolean }) => {
    const { idpId } = await idps().createIdentityProvider({ name, issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret-value" });
    const before = (await idps().getIdentityProvider({ idpId })).idp!;
    const { details } = await idps().updateIdentityProvider({ idpId, name, ...change });
    const after = (await idps().getIdentityProvider({ idpId })).idp!;
    return { idpId, before, details, after };
  };

  it("only the styling type: an idp.changed event with a new sequence, and the new styling is stored", async () => {
    const { idpId, before, details, after } = await replaceWith("Restyled", { stylingType: StylingType.VENDOR, autoRegister: false });
    expect(after).toMatchObject({ name: "Restyled", stylingType: StylingType.VENDOR, autoRegister: false });
    expect(details!.sequence).toBeGreaterThan(before.details!.sequence);
    expect(after.details?.sequence).toBe(details!.sequence);
    expect(await eventTypesOf(t, "idp", idpId)).toEqual(["idp.added", "idp.changed"]);
  });

  it("only auto-register: an idp.changed event with a new sequence, and auto-register is stored", async () => {
    const { idpId, before, details, after } = await replaceWith("Auto registering", { stylingType: StylingType.UNSPECIFIED, autoRegister: true });
    expect(after).toMatchObject({ name: "Auto registering", stylingType: StylingType.UNSPECIFIED, autoRegister: true });
    expect(details!.sequence).toBeGreaterThan(before.details!.sequence);
    expect(await eventTypesOf(t, "idp", idpId)).toEqual(["idp.added", "idp.changed"]);
  });

  it("nothing (the same name, styling and auto-register): no event, and the current details", async () => {
    const { idpId, before, details, after } = await replaceWith("Unchanged", { stylingType: StylingType.UNSPECIFIED, autoRegister: false });
    expect(details).toEqual(before.details);
    expect(after).toEqual(before);
    expect(await eventTypesOf(t, "idp", idpId)).toEqual(["idp.added"]);
  });
});
