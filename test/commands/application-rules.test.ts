import { beforeAll, describe, expect, it } from "vitest";
import { ApiAuthMethod, ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { sha256Hex } from "../../src/support/crypto.js";
import { useTestServer } from "../support/server.js";

/**
 * Which credentials an application gets (application.proto): OIDC and API applications a generated
 * client id, and a client secret only for the methods that authenticate with one (OIDC BASIC and POST,
 * API BASIC; shown once, stored hashed); a SAML application none at all (the catalogue's
 * `application.added`: "clientId (null for SAML)"). Read back from what the server stores.
 */
const t = useTestServer();
let projectId: string;

const metadataXml =
  `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.rules.example.com/saml">` +
  `<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></md:EntityDescriptor>`;

beforeAll(async () => {
  ({ projectId } = await t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken }).createProject({ name: "Application rules" }));
});

const apps = () => t.clients.client(ApplicationService, "connect-json-http1", { token: t.server.adminToken });
const stored = async (appId: string) => {
  const app = await t.server.gatehouse.deps.store.findApplicationById(appId);
  if (!app) throw new Error(`application ${appId} is not stored`);
  return app;
};

describe("a SAML application", () => {
  it("created from metadata XML has no client id and no client secret", async () => {
    const { appId } = await apps().createSamlApplication({ projectId, name: "SP from XML", metadata: { case: "metadataXml", value: metadataXml } });
    expect(await stored(appId)).toMatchObject({ clientId: null, clientSecretHash: null });
  });

  it("created from a metadata URL has no client id and no client secret", async () => {
    const { appId } = await apps().createSamlApplication({ projectId, name: "SP from URL", metadata: { case: "metadataUrl", value: "https://sp.rules.example.com/metadata" } });
    expect(await stored(appId)).toMatchObject({ clientId: null, clientSecretHash: null });
  });
});

describe("an OIDC or API application", () => {
  const oidc = (authMethod: OidcAuthMethod) => () => apps().createOidcApplication({ projectId, name: `OIDC ${OidcAuthMethod[authMethod]}`, redirectUris: ["https://rp.example.com/cb"], authMethod });
  const api = (authMethod: ApiAuthMethod) => () => apps().createApiApplication({ projectId, name: `API ${ApiAuthMethod[authMethod]}`, authMethod });
  it.each([
    ["OIDC BASIC", oidc(OidcAuthMethod.BASIC), true],
    ["OIDC POST", oidc(OidcAuthMethod.POST), true],
    ["OIDC NONE", oidc(OidcAuthMethod.NONE), false],
    ["OIDC PRIVATE_KEY_JWT", oidc(OidcAuthMethod.PRIVATE_KEY_JWT), false],
    ["API BASIC", api(ApiAuthMethod.BASIC), true],
    ["API PRIVATE_KEY_JWT", api(ApiAuthMethod.PRIVATE_KEY_JWT), false],
  ])("with %s gets a client id, and a client secret exactly when it authenticates with one", async (_method, create, withSecret) => {
    const { appId, clientId, clientSecret } = await create();
    expect(clientId).not.toBe("");
    const app = await stored(appId);
    expect(app.clientId).toBe(clientId);
    if (withSecret) {
      expect(clientSecret).toMatch(/^[\w-]{43}$/);
      expect(app.clientSecretHash).toBe(sha256Hex(clientSecret!));
    } else {
      expect(clientSecret).toBeUndefined();
      expect(app.clientSecretHash).toBeNull();
    }
  });
});
