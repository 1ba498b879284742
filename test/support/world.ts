import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Clients } from "./clients.js";

export interface Actor {
  userId: string;
  token: string;
}

/** A machine user in `orgId` with a token, optionally with organization roles there. */
export async function createActor(clients: Clients, adminToken: string, orgId: string, userName: string, orgRoles: string[] = []): Promise<Actor> {
  const admin = { token: adminToken, orgId };
  const users = clients.client(UserService, "connect-json-http1", admin);
  const { userId } = await users.createMachineUser({ userName, name: userName });
  if (orgRoles.length > 0) await clients.client(OrganizationService, "connect-json-http1", admin).addOrganizationMember({ userId, roles: orgRoles });
  const { token } = await users.addPersonalAccessToken({ userId });
  return { userId, token };
}

/**
 * Organizations A (owns projects P1 and P2, an IDP and an OIDC app in P1), B and C; P1 granted to B
 * (grant G1) and to C (grant G2); and one actor per row of the permission matrix.
 */
export async function buildWorld(clients: Clients, adminToken: string, prefix: string) {
  const admin = { token: adminToken };
  const orgs = clients.client(OrganizationService, "connect-json-http1", admin);
  const { organizationId: orgA } = await orgs.createOrganization({ name: `${prefix} A` });
  const { organizationId: orgB } = await orgs.createOrganization({ name: `${prefix} B` });
  const { organizationId: orgC } = await orgs.createOrganization({ name: `${prefix} C` });

  const projects = clients.client(ProjectService, "connect-json-http1", { ...admin, orgId: orgA });
  const { projectId: p1 } = await projects.createProject({ name: "P1" });
  const { projectId: p2 } = await projects.createProject({ name: "P2" });
  await projects.addProjectRole({ projectId: p1, roleKey: "reader", displayName: "Reader" });
  const { grantId: g1 } = await projects.createProjectGrant({ projectId: p1, grantedOrganizationId: orgB, roleKeys: ["reader"] });
  const { grantId: g2 } = await projects.createProjectGrant({ projectId: p1, grantedOrganizationId: orgC, roleKeys: [] });
  const { appId } = await clients
    .client(ApplicationService, "connect-json-http1", { ...admin, orgId: orgA })
    .createOidcApplication({ projectId: p1, name: "Web", redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
  const { idpId } = await clients
    .client(IdentityProviderService, "connect-json-http1", { ...admin, orgId: orgA })
    .createIdentityProvider({ name: "Corp SSO", issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret-value" });

  const actors = {
    orgOwnerA: await createActor(clients, adminToken, orgA, `${prefix}-owner-a`, ["ORG_OWNER"]),
    orgOwnerC: await createActor(clients, adminToken, orgC, `${prefix}-owner-c`, ["ORG_OWNER"]),
    projectOwnerP1: await createActor(clients, adminToken, orgB, `${prefix}-powner-p1`),
    projectOwnerP2: await createActor(clients, adminToken, orgB, `${prefix}-powner-p2`),
    grantOwnerG1: await createActor(clients, adminToken, orgB, `${prefix}-gowner-g1`),
    grantOwnerG2: await createActor(clients, adminToken, orgC, `${prefix}-gowner-g2`),
    nobody: await createActor(clients, adminToken, orgA, `${prefix}-nobody`),
  };
  await projects.addProjectMember({ projectId: p1, userId: actors.projectOwnerP1.userId, roles: ["PROJECT_OWNER"] });
  await projects.addProjectMember({ projectId: p2, userId: actors.projectOwnerP2.userId, roles: ["PROJECT_OWNER"] });
  await projects.addProjectGrantMember({ projectId: p1, grantId: g1, userId: actors.grantOwnerG1.userId, roles: ["PROJECT_GRANT_OWNER"] });
  await projects.addProjectGrantMember({ projectId: p1, grantId: g2, userId: actors.grantOwnerG2.userId, roles: ["PROJECT_GRANT_OWNER"] });
  return { orgA, orgB, orgC, p1, p2, g1, g2, appId, idpId, actors };
}

export type World = Awaited<ReturnType<typeof buildWorld>>;
