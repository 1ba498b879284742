import { describe, expect, it } from "vitest";
import {
  ApiAuthMethod,
  ApplicationService,
  OidcAppType,
  OidcAuthMethod,
  OidcGrantType,
  OidcResponseType,
} from "../../gen/gatehouse/admin/v1/application_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { useTestServer } from "../support/server.js";

// What the read views of the API say (the proto docs of Application, IdentityProvider, HumanUser and ListDetails):
// each reads back what was created, for every protocol.

const t = useTestServer();
let n = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++n}`;
const admin = <S extends Parameters<typeof t.clients.client>[0]>(service: S, protocol: Protocol, orgId?: string) =>
  t.clients.client(service, protocol, { token: t.server.adminToken, ...(orgId ? { orgId } : {}) });

async function freshOrganization(protocol: Protocol): Promise<string> {
  return (await admin(OrganizationService, protocol).createOrganization({ name: unique("Views org") })).organizationId;
}

describe.each(PROTOCOLS)("read views over %s", (protocol) => {
  it("an OIDC application reads back its client id and every setting it was created with, in Get and List", async () => {
    const orgId = await freshOrganization(protocol);
    const { projectId } = await admin(ProjectService, protocol, orgId).createProject({ name: unique("Views project") });
    const apps = admin(ApplicationService, protocol, orgId);
    const settings = {
      redirectUris: ["https://views.example.com/cb", "http://localhost:4000/cb"],
      responseTypes: [OidcResponseType.CODE],
      grantTypes: [OidcGrantType.AUTHORIZATION_CODE, OidcGrantType.REFRESH_TOKEN],
      appType: OidcAppType.WEB,
      authMethod: OidcAuthMethod.POST,
    };
    const created = await apps.createOidcApplication({ projectId, name: "Views OIDC", ...settings });
    expect(created.clientId).not.toBe("");
    const expected = { case: "oidc", value: expect.objectContaining({ clientId: created.clientId, ...settings }) };
    expect((await apps.getApplication({ projectId, appId: created.appId })).app?.config).toEqual(expected);
    const listed = (await apps.listApplications({ projectId })).apps.find((app) => app.appId === created.appId);
    expect(listed?.config).toEqual(expected);
  });

  it("an API application reads back its client id and auth method", async () => {
    const orgId = await freshOrganization(protocol);
    const { projectId } = await admin(ProjectService, protocol, orgId).createProject({ name: unique("Views project") });
    const apps = admin(ApplicationService, protocol, orgId);
    for (const authMethod of [ApiAuthMethod.BASIC, ApiAuthMethod.PRIVATE_KEY_JWT]) {
      const created = await apps.createApiApplication({ projectId, name: `Views API ${authMethod}`, authMethod });
      expect(created.clientId).not.toBe("");
      const { app } = await apps.getApplication({ projectId, appId: created.appId });
      expect(app?.config).toEqual({ case: "api", value: expect.objectContaining({ clientId: created.clientId, authMethod }) });
    }
  });

  it("an identity provider says whether it is instance-level: false for one of an organization, true for one of the instance", async () => {
    const orgId = await freshOrganization(protocol);
    const idps = admin(IdentityProviderService, protocol, orgId);
    const request = { issuer: "https://views-sso.example.com", clientId: "views", clientSecret: "views-secret" };
    const { idpId: orgIdp } = await idps.createIdentityProvider({ name: unique("Org SSO"), ...request });
    const { idpId: instanceIdp } = await idps.createIdentityProvider({ name: unique("Instance SSO"), ...request, instanceLevel: true });
    expect((await idps.getIdentityProvider({ idpId: orgIdp })).idp?.instanceLevel).toBe(false);
    expect((await idps.getIdentityProvider({ idpId: instanceIdp })).idp?.instanceLevel).toBe(true);
  });

  it("a human user says whether a password is stored: false without one, true with one", async () => {
    const orgId = await freshOrganization(protocol);
    const users = admin(UserService, protocol, orgId);
    const human = (userName: string) => ({ userName, profile: { firstName: "Ada", lastName: "Lovelace" }, email: { email: `${userName}@example.com` } });
    const { userId: without } = await users.createHumanUser(human(unique("no-password")));
    const { userId: withPassword } = await users.createHumanUser({ ...human(unique("password")), password: "Sup3r-secret!" });
    expect((await users.getUser({ userId: without })).user?.type).toMatchObject({ case: "human", value: { hasPassword: false } });
    expect((await users.getUser({ userId: withPassword })).user?.type).toMatchObject({ case: "human", value: { hasPassword: true } });
  });

  it("ListInstanceMembers honours page_size and page_token: one member a page, each once, the last page without a token", async () => {
    const orgId = await freshOrganization(protocol);
    const added: string[] = [];
    for (const name of ["views-member-a", "views-member-b"]) {
      const { userId } = await admin(UserService, protocol, orgId).createMachineUser({ userName: unique(name), name });
      await admin(InstanceService, protocol).addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] });
      added.push(userId);
    }
    const instance = admin(InstanceService, protocol);
    const seen: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await instance.listInstanceMembers({ pageSize: 1, pageToken });
      expect(page.members).toHaveLength(1);
      seen.push(page.members[0]!.userId);
      pageToken = page.details!.nextPageToken;
      pages++;
      expect(BigInt(pages) < page.details!.totalResult, "a next page exactly while members remain").toBe(pageToken !== "");
    } while (pageToken);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(added));
  });
});
