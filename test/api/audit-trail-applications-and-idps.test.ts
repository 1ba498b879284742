import { describe, expect, it } from "vitest";
import { ApiAuthMethod, ApplicationService, OidcAppType, OidcAuthMethod, OidcGrantType, OidcResponseType } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { IdentityProviderService, StylingType } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { AuditTrail, entriesBy, expectExactly, instanceIdOf, instanceOwner, orgWithOwner, type TrailEntry } from "../support/audit-trail.js";
import type { Protocol } from "../support/clients.js";
import { useTestServer } from "../support/server.js";

/*
 * The application and identity provider events of the catalogue at Event.payload
 * (proto/gatehouse/admin/v1/event.proto), each caused by a real call and read back through
 * ListEvents filtered to the aggregate it is about.
 */
const t = useTestServer();
const trail = () => new AuditTrail(t.clients, t.server.adminToken);
const appTrail = (appId: string) => ({ aggregateType: "application", aggregateId: appId });
const idpTrail = (idpId: string) => ({ aggregateType: "idp", aggregateId: idpId });

/** An organization with its owner, a project there, and the owner's entries. */
async function withProject(name: string, protocol: Protocol) {
  const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, name);
  const as = { token: owner.token, orgId };
  const { projectId } = await t.clients.client(ProjectService, "connect-json-http1", as).createProject({ name: `${name} project` });
  const apps = t.clients.client(ApplicationService, protocol, as);
  /** An event of the owner in its organization. */
  const entry = entriesBy(owner.userId, orgId);
  return { orgId, owner, as, projectId, apps, entry };
}

const entityId = "https://sp.example.com/metadata";
const samlXml =
  `<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">` +
  `<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
  `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.com/acs" index="0"/>` +
  `</md:SPSSODescriptor></md:EntityDescriptor>`;

describe("audit trail: creating applications", () => {
  it("application.added for OIDC: project, name, client id and the settings with their defaults; never the secret", async () => {
    const { projectId, apps, entry } = await withProject("trail-oidc", "grpc-h2c");
    const web = await trail().record(
      () => apps.createOidcApplication({ projectId, name: "Web", redirectUris: ["https://app.example.com/cb"] }),
      (r) => appTrail(r.appId),
      "grpc-h2c",
    );
    expect(web.events).toEqual([
      entry("application.added", "application", web.response.appId, {
        projectId,
        name: "Web",
        clientId: web.response.clientId,
        settings: {
          type: "oidc",
          redirectUris: ["https://app.example.com/cb"],
          appType: OidcAppType.WEB,
          authMethod: OidcAuthMethod.BASIC,
          responseTypes: [OidcResponseType.CODE],
          grantTypes: [OidcGrantType.AUTHORIZATION_CODE],
        },
      }),
    ]);
    expect(web.response.clientSecret).toBeTruthy();
    expect(JSON.stringify(web.events)).not.toContain(web.response.clientSecret!);

    const spa = await trail().record(
      () =>
        apps.createOidcApplication({
          projectId,
          name: "SPA",
          redirectUris: ["https://spa.example.com/cb", "http://localhost:3000/cb"],
          appType: OidcAppType.USER_AGENT,
          responseTypes: [OidcResponseType.ID_TOKEN, OidcResponseType.CODE, OidcResponseType.ID_TOKEN],
          grantTypes: [OidcGrantType.IMPLICIT, OidcGrantType.REFRESH_TOKEN],
        }),
      (r) => appTrail(r.appId),
    );
    expect(spa.events).toEqual([
      entry("application.added", "application", spa.response.appId, {
        projectId,
        name: "SPA",
        clientId: spa.response.clientId,
        settings: {
          type: "oidc",
          redirectUris: ["https://spa.example.com/cb", "http://localhost:3000/cb"],
          appType: OidcAppType.USER_AGENT,
          authMethod: OidcAuthMethod.NONE,
          responseTypes: [OidcResponseType.ID_TOKEN, OidcResponseType.CODE],
          grantTypes: [OidcGrantType.IMPLICIT, OidcGrantType.REFRESH_TOKEN],
        },
      }),
    ]);
  });

  it("application.added for API: the auth method (basic by default); for SAML: no client id and the metadata as given (XML or URL)", async () => {
    const { projectId, apps, entry } = await withProject("trail-api-saml", "grpc-web-http1");
    const api = await trail().record(() => apps.createApiApplication({ projectId, name: "Backend" }), (r) => appTrail(r.appId), "grpc-web-http1");
    expect(api.events).toEqual([
      entry("application.added", "application", api.response.appId, { projectId, name: "Backend", clientId: api.response.clientId, settings: { type: "api", authMethod: ApiAuthMethod.BASIC } }),
    ]);
    expect(JSON.stringify(api.events)).not.toContain(api.response.clientSecret!);
    const jwt = await trail().record(() => apps.createApiApplication({ projectId, name: "Signed", authMethod: ApiAuthMethod.PRIVATE_KEY_JWT }), (r) => appTrail(r.appId));
    expect(jwt.events).toEqual([
      entry("application.added", "application", jwt.response.appId, { projectId, name: "Signed", clientId: jwt.response.clientId, settings: { type: "api", authMethod: ApiAuthMethod.PRIVATE_KEY_JWT } }),
    ]);

    const fromXml = await trail().record(() => apps.createSamlApplication({ projectId, name: "SP by XML", metadata: { case: "metadataXml", value: samlXml } }), (r) => appTrail(r.appId));
    expect(fromXml.events).toEqual([
      entry("application.added", "application", fromXml.response.appId, {
        projectId,
        name: "SP by XML",
        clientId: null,
        settings: { type: "saml", entityId, metadataXml: samlXml, metadataUrl: "" },
      }),
    ]);
    const fromUrl = await trail().record(
      () => apps.createSamlApplication({ projectId, name: "SP by URL", metadata: { case: "metadataUrl", value: "https://sp.example.com/saml/metadata" } }),
      (r) => appTrail(r.appId),
      "connect-proto-h2c",
    );
    expect(fromUrl.events).toEqual([
      entry("application.added", "application", fromUrl.response.appId, {
        projectId,
        name: "SP by URL",
        clientId: null,
        settings: { type: "saml", entityId: "", metadataXml: "", metadataUrl: "https://sp.example.com/saml/metadata" },
      }),
    ]);
  });
});

describe("audit trail: changing applications", () => {
  it("application.changed carries the new name; deactivated and reactivated an empty payload; client_secret.regenerated the client id only", async () => {
    const { projectId, apps, entry } = await withProject("trail-app-changes", "connect-proto-h2c");
    const { appId, clientId } = await apps.createApiApplication({ projectId, name: "Billing" });
    const of = appTrail(appId);
    expect((await trail().record(() => apps.updateApplication({ projectId, appId, name: "Billing (EU)" }), of, "connect-proto-h2c")).events).toEqual([
      entry("application.changed", "application", appId, { name: "Billing (EU)" }),
    ]);
    expect((await trail().record(() => apps.deactivateApplication({ projectId, appId }), of, "grpc-h2c")).events).toEqual([entry("application.deactivated", "application", appId, {})]);
    expect((await trail().record(() => apps.reactivateApplication({ projectId, appId }), of, "grpc-web-http1")).events).toEqual([entry("application.reactivated", "application", appId, {})]);
    const regenerated = await trail().record(() => apps.regenerateClientSecret({ projectId, appId }), of);
    expect(regenerated.events).toEqual([entry("application.client_secret.regenerated", "application", appId, { clientId })]);
    expect(JSON.stringify(regenerated.events)).not.toContain(regenerated.response.clientSecret);
  });

  it("application.removed names project, name and client id (null for SAML), never the secret", async () => {
    const { projectId, apps, entry } = await withProject("trail-app-remove", "grpc-h2c");
    const oidc = await apps.createOidcApplication({ projectId, name: "Gone web", redirectUris: ["https://gone.example.com/cb"] });
    const saml = await apps.createSamlApplication({ projectId, name: "Gone SP", metadata: { case: "metadataXml", value: samlXml } });
    expect((await trail().record(() => apps.removeApplication({ projectId, appId: oidc.appId }), appTrail(oidc.appId), "grpc-h2c")).events).toEqual([
      entry("application.removed", "application", oidc.appId, { projectId, name: "Gone web", clientId: oidc.clientId }),
    ]);
    expect((await trail().record(() => apps.removeApplication({ projectId, appId: saml.appId }), appTrail(saml.appId))).events).toEqual([
      entry("application.removed", "application", saml.appId, { projectId, name: "Gone SP", clientId: null }),
    ]);
  });
});

describe("audit trail: identity providers", () => {
  it("idp.added carries every setting but the secret (default scopes when none are given); idp.changed the replaced fields", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-idp");
    const idps = t.clients.client(IdentityProviderService, "connect-json-http1", { token: owner.token, orgId });
    const entry = (idpId: string, type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "idp", aggregateId: idpId, resourceOwner: orgId, actor: owner.userId, payload });
    const plain = await trail().record(
      () => idps.createIdentityProvider({ name: "Plain SSO", issuer: "https://plain.example.com", clientId: "plain-client", clientSecret: "plain-secret-value" }),
      (r) => idpTrail(r.idpId),
    );
    expect(plain.events).toEqual([
      entry(plain.response.idpId, "idp.added", {
        name: "Plain SSO",
        issuer: "https://plain.example.com",
        clientId: "plain-client",
        scopes: ["openid", "profile", "email"],
        stylingType: StylingType.UNSPECIFIED,
        autoRegister: false,
        instanceLevel: false,
      }),
    ]);
    const styled = await trail().record(
      () =>
        idps.createIdentityProvider({
          name: "Styled SSO",
          issuer: "https://styled.example.com",
          clientId: "styled-client",
          clientSecret: "styled-secret-value",
          scopes: ["openid", "groups", "openid"],
          stylingType: StylingType.VENDOR,
          autoRegister: true,
        }),
      (r) => idpTrail(r.idpId),
      "grpc-h2c",
    );
    expect(styled.events).toEqual([
      entry(styled.response.idpId, "idp.added", {
        name: "Styled SSO",
        issuer: "https://styled.example.com",
        clientId: "styled-client",
        scopes: ["openid", "groups"],
        stylingType: StylingType.VENDOR,
        autoRegister: true,
        instanceLevel: false,
      }),
    ]);
    expect(JSON.stringify([...plain.events, ...styled.events])).not.toMatch(/secret-value/);

    const changed = await trail().record(
      () => t.clients.client(IdentityProviderService, "grpc-web-http1", { token: owner.token, orgId }).updateIdentityProvider({ idpId: styled.response.idpId, name: "Styled SSO (new)" }),
      idpTrail(styled.response.idpId),
    );
    expect(changed.events).toEqual([entry(styled.response.idpId, "idp.changed", { name: "Styled SSO (new)", stylingType: StylingType.UNSPECIFIED, autoRegister: false })]);
  });

  it("an instance-level IDP is owned by the instance; its removal counts the links and removes each as user.idp_link.removed in the user's organization", async () => {
    const root = await instanceOwner(t.clients, t.server.adminToken, "trail-idp-root");
    const instanceId = await instanceIdOf(t.clients, t.server.adminToken);
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: root.token });
    const { organizationId: first } = await orgs.createOrganization({ name: "trail-idp-first" });
    const { organizationId: second } = await orgs.createOrganization({ name: "trail-idp-second" });
    const idps = t.clients.client(IdentityProviderService, "connect-proto-h2c", { token: root.token, orgId: first });
    const created = await trail().record(
      () => idps.createIdentityProvider({ name: "Instance SSO", issuer: "https://instance-sso.example.com", clientId: "instance-client", clientSecret: "instance-secret", instanceLevel: true }),
      (r) => idpTrail(r.idpId),
      "connect-proto-h2c",
    );
    const idpId = created.response.idpId;
    const instanceEntry = (type: string, payload: TrailEntry["payload"]): TrailEntry => ({ type, aggregateType: "idp", aggregateId: idpId, resourceOwner: instanceId, actor: root.userId, payload });
    expect(created.events).toEqual([
      instanceEntry("idp.added", {
        name: "Instance SSO",
        issuer: "https://instance-sso.example.com",
        clientId: "instance-client",
        scopes: ["openid", "profile", "email"],
        stylingType: StylingType.UNSPECIFIED,
        autoRegister: false,
        instanceLevel: true,
      }),
    ]);

    const linked = async (orgId: string, userName: string, externalUserId: string) => {
      const { userId } = await t.clients
        .client(UserService, "connect-json-http1", { token: root.token, orgId })
        .createHumanUser({ userName, profile: { firstName: "Linked", lastName: "User" }, email: { email: `${userName}@example.com`, isEmailVerified: true }, idps: [{ configId: idpId, externalUserId }] });
      return { userId, orgId, externalUserId };
    };
    const links = [await linked(first, "trail-idp-linked-1", "ext-1"), await linked(second, "trail-idp-linked-2", "ext-2")];

    const mark = await trail().mark();
    const { details } = await idps.removeIdentityProvider({ idpId });
    expect(await trail().since(mark, idpTrail(idpId), details!.sequence, "grpc-h2c")).toEqual([instanceEntry("idp.removed", { name: "Instance SSO", instanceLevel: true, linksRemoved: 2 })]);
    expectExactly(
      await trail().since(mark, { aggregateType: "user" }, details!.sequence),
      links.map(({ userId, orgId, externalUserId }) => ({
        type: "user.idp_link.removed",
        aggregateType: "user",
        aggregateId: userId,
        resourceOwner: orgId,
        actor: root.userId,
        payload: { idpId, externalUserId, cause: "idp.removed" },
      })),
    );
  });

  it("an organization's IDP without links: idp.removed with instanceLevel false and no links", async () => {
    const { orgId, owner } = await orgWithOwner(t.clients, t.server.adminToken, "trail-idp-unlinked");
    const idps = t.clients.client(IdentityProviderService, "grpc-web-http1", { token: owner.token, orgId });
    const { idpId } = await idps.createIdentityProvider({ name: "Lonely SSO", issuer: "https://lonely.example.com", clientId: "lonely", clientSecret: "lonely-secret" });
    const mark = await trail().mark();
    const { details } = await idps.removeIdentityProvider({ idpId });
    expect(await trail().since(mark, idpTrail(idpId), details!.sequence)).toEqual<TrailEntry[]>([
      { type: "idp.removed", aggregateType: "idp", aggregateId: idpId, resourceOwner: orgId, actor: owner.userId, payload: { name: "Lonely SSO", instanceLevel: false, linksRemoved: 0 } },
    ]);
    expect(await trail().since(mark, { aggregateType: "user" }, details!.sequence)).toEqual([]);
  });
});
