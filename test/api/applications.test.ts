import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiAuthMethod, ApplicationService, OidcAppType, OidcAuthMethod, OidcGrantType, OidcResponseType } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

const t = useTestServer();
let projectId: string;
let otherProjectId: string;

const metadata = (entityId: string) =>
  `<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">` +
  `<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
  `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.com/acs" index="0"/>` +
  `</md:SPSSODescriptor></md:EntityDescriptor>`;

beforeAll(async () => {
  const projects = t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken });
  ({ projectId } = await projects.createProject({ name: "Apps" }));
  ({ projectId: otherProjectId } = await projects.createProject({ name: "Other apps" }));
});

const apps = (protocol: (typeof PROTOCOLS)[number] = "connect-json-http1") => t.clients.client(ApplicationService, protocol, { token: t.server.adminToken });
/** JSON text of anything, bigints included: for "this secret appears nowhere" assertions. */
const text = (value: unknown) => JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
const eventCount = async () => (await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({})).details!.totalResult;

describe("creating applications", () => {
  it("creates an OIDC app with a generated client id and a secret returned once, never read back", async () => {
    const created = await apps().createOidcApplication({
      projectId,
      name: "Portal",
      redirectUris: ["https://portal.example.com/cb", "http://localhost:3000/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb", "com.example.app:/oauth"],
      authMethod: OidcAuthMethod.POST,
    });
    expect(created.clientId).not.toBe("");
    expect(created.clientSecret).toMatch(/^[\w-]{43}$/);
    const { app } = await apps().getApplication({ projectId, appId: created.appId });
    expect(text(app)).not.toContain(created.clientSecret!);
    const { events } = await t.clients.client(EventService, "connect-json-http1", { token: t.server.adminToken }).listEvents({ aggregateId: created.appId });
    expect(text(events)).not.toContain(created.clientSecret!);
    expect(app?.config.case).toBe("oidc");
  });

  it("generates no secret for public clients", async () => {
    const spa = await apps().createOidcApplication({ projectId, name: "SPA", redirectUris: ["https://spa.example.com/"], appType: OidcAppType.USER_AGENT });
    expect(spa.clientSecret).toBeUndefined();
    const api = await apps().createApiApplication({ projectId, name: "API jwt", authMethod: ApiAuthMethod.PRIVATE_KEY_JWT });
    expect(api.clientSecret).toBeUndefined();
    const basic = await apps().createApiApplication({ projectId, name: "API basic" });
    expect(basic.clientSecret).toBeDefined();
  });

  it.each([
    ["a relative URI", "/callback"],
    ["plain http on a public host", "http://example.com/cb"],
    ["a fragment", "https://example.com/cb#x"],
    ["javascript:", "javascript:alert(1)"],
    ["data:", "data:text/html,hi"],
  ])("rejects a redirect URI with %s, naming its index, and writes nothing", async (_name, uri) => {
    const before = await eventCount();
    const error = await failure(apps().createOidcApplication({ projectId, name: `bad ${_name}`, redirectUris: ["https://ok.example.com/cb", uri] }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "application.redirect_uri_invalid", fields: ["redirect_uris[1]"] });
    expect(await eventCount()).toBe(before);
  });

  it("creates a SAML app from metadata XML and reads the entityID, or from an https URL", async () => {
    const xml = metadata("https://sp.example.com/saml");
    const fromXml = await apps().createSamlApplication({ projectId, name: "SAML SP", metadata: { case: "metadataXml", value: xml } });
    const { app } = await apps().getApplication({ projectId, appId: fromXml.appId });
    // SamlConfig: the XML as given, when given; the URL, when given. One or the other, never both.
    expect(app?.config).toMatchObject({ case: "saml", value: { entityId: "https://sp.example.com/saml", metadataXml: xml, metadataUrl: "" } });
    const fromUrl = await apps().createSamlApplication({ projectId, name: "SAML by URL", metadata: { case: "metadataUrl", value: "https://sp.example.com/metadata" } });
    // Gatehouse does not fetch the metadata at creation, so the entity id is not known yet.
    const { app: byUrl } = await apps().getApplication({ projectId, appId: fromUrl.appId });
    expect(byUrl?.config).toMatchObject({ case: "saml", value: { entityId: "", metadataXml: "", metadataUrl: "https://sp.example.com/metadata" } });
  });

  it.each([
    ["malformed XML", "<md:EntityDescriptor", "metadata_xml"],
    ["XML without an EntityDescriptor", "<root/>", "metadata_xml"],
    ["an EntityDescriptor without entityID", '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"/>', "metadata_xml"],
    ["a DOCTYPE (entity expansion)", '<!DOCTYPE x [<!ENTITY a "b">]><EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&a;"/>', "metadata_xml"],
  ])("rejects SAML metadata with %s and writes nothing", async (_name, xml, field) => {
    const before = await eventCount();
    const error = await failure(apps().createSamlApplication({ projectId, name: `bad saml ${_name}`, metadata: { case: "metadataXml", value: xml } }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "application.saml_metadata_invalid", fields: [field] });
    expect(await eventCount()).toBe(before);
    expect((await apps().listApplications({ projectId })).apps.map((a) => a.name)).not.toContain(`bad saml ${_name}`);
  });

  it("rejects a metadata URL that is not https, and a request with neither XML nor URL", async () => {
    const http = await failure(apps().createSamlApplication({ projectId, name: "http saml", metadata: { case: "metadataUrl", value: "http://sp.example.com/m" } }));
    expect(http).toMatchObject({ code: Code.InvalidArgument, reason: "application.saml_metadata_invalid", fields: ["metadata_url"] });
    const neither = await failure(apps().createSamlApplication({ projectId, name: "no metadata" }));
    expect(neither).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["metadata"] });
  });
});

describe.each(PROTOCOLS)("UpdateApplication (SPEC 4.5) over %s", (protocol) => {
  it("changes only the name: redirect URIs, auth method and SAML metadata stay exactly as they were", async () => {
    const client = apps(protocol);
    const oidc = await client.createOidcApplication({
      projectId,
      name: `OIDC ${protocol}`,
      redirectUris: ["https://a.example.com/cb", "http://localhost:1234/cb"],
      responseTypes: [OidcResponseType.CODE, OidcResponseType.ID_TOKEN],
      grantTypes: [OidcGrantType.AUTHORIZATION_CODE, OidcGrantType.REFRESH_TOKEN],
      appType: OidcAppType.NATIVE,
      authMethod: OidcAuthMethod.PRIVATE_KEY_JWT,
    });
    const saml = await client.createSamlApplication({ projectId, name: `SAML ${protocol}`, metadata: { case: "metadataXml", value: metadata(`urn:${protocol}`) } });
    for (const appId of [oidc.appId, saml.appId]) {
      const before = (await client.getApplication({ projectId, appId })).app!;
      const { details } = await client.updateApplication({ projectId, appId, name: `Renamed ${appId}` });
      const after = (await client.getApplication({ projectId, appId })).app!;
      expect(after.name).toBe(`Renamed ${appId}`);
      expect(after.config).toEqual(before.config);
      expect(details).toMatchObject({ resourceOwner: before.details!.resourceOwner, creationDate: before.details!.creationDate });
      expect(details!.sequence).toBeGreaterThan(before.details!.sequence);
    }
  });

  it("is idempotent: the same name again appends no event and returns the same details", async () => {
    const client = apps(protocol);
    const { appId } = await client.createApiApplication({ projectId, name: `Idem ${protocol}` });
    const first = await client.updateApplication({ projectId, appId, name: `Idem2 ${protocol}` });
    const before = await eventCount();
    const second = await client.updateApplication({ projectId, appId, name: `Idem2 ${protocol}` });
    expect(await eventCount()).toBe(before);
    expect(second.details).toEqual(first.details);
  });

  it("keeps names unique per project case-insensitively, but a case-only rename of itself is fine", async () => {
    const client = apps(protocol);
    await client.createApiApplication({ projectId, name: `Taken ${protocol}` });
    const { appId } = await client.createApiApplication({ projectId, name: `Mine ${protocol}` });
    const error = await failure(client.updateApplication({ projectId, appId, name: `TAKEN ${protocol}` }));
    expect(error).toMatchObject({ code: Code.AlreadyExists, reason: "application.already_exists" });
    await client.updateApplication({ projectId, appId, name: `MINE ${protocol}` });
    // Another project may use the name.
    await client.createApiApplication({ projectId: otherProjectId, name: `Taken ${protocol}` });
  });

  it("answers not_found for an unknown app, an app of another project, and an unknown project", async () => {
    const client = apps(protocol);
    const { appId } = await client.createApiApplication({ projectId: otherProjectId, name: `Elsewhere ${protocol}` });
    expect(await failure(client.updateApplication({ projectId, appId: "no-such-app", name: "x" }))).toMatchObject({ code: Code.NotFound, reason: "application.not_found" });
    expect(await failure(client.updateApplication({ projectId, appId, name: "x" }))).toMatchObject({ code: Code.NotFound, reason: "application.not_found" });
    expect(await failure(client.updateApplication({ projectId: "no-such-project", appId, name: "x" }))).toMatchObject({ code: Code.NotFound, reason: "project.not_found" });
  });

  it("checks the SPEC section 8 limit on name (1..200) and the ids", async () => {
    const client = apps(protocol);
    const { appId } = await client.createApiApplication({ projectId, name: `Limits ${protocol}` });
    await client.updateApplication({ projectId, appId, name: `${protocol}-`.padEnd(200, "n") });
    const invalid = async (request: { projectId: string; appId: string; name: string }, field: string) =>
      expect(await failure(client.updateApplication(request))).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: [field] });
    await invalid({ projectId, appId, name: "n".repeat(201) }, "name");
    await invalid({ projectId, appId, name: "" }, "name");
    await invalid({ projectId, appId: "a".repeat(201), name: "x" }, "app_id");
    await invalid({ projectId: "p".repeat(201), appId, name: "x" }, "project_id");
  });
});
