import { randomBytes } from "node:crypto";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { Clients } from "./clients.js";

/** A user made for one cell, with a token of its own so it can also call as itself. */
export interface FreshUser {
  userId: string;
  token: string;
  tokenId: string;
}

let counter = 0;

/** A name no other cell uses, also across reruns against a kept data directory. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${randomBytes(3).toString("hex")}`;
}

/**
 * An id shaped like `existing` (same length and alphabet) that names nothing: the random tail is
 * replaced, so validation treats both alike and only existence differs.
 */
export function unknownIdLike(existing: string): string {
  const tail = Math.min(20, Math.ceil(existing.length / 2));
  const alphabet = "0123456789abcdef";
  const replacement = Array.from(randomBytes(tail), (byte) => alphabet[byte % 16]).join("");
  return existing.slice(0, existing.length - tail) + replacement;
}

/**
 * Fresh targets for matrix cells, made by the bootstrap admin over Connect JSON (setup, not the
 * behaviour under test). Each cell gets its own, so no cell depends on what another did.
 */
export class FreshTargets {
  constructor(
    private readonly clients: Clients,
    private readonly adminToken: string,
  ) {}

  private as<T extends Parameters<Clients["client"]>[0]>(service: T, orgId?: string) {
    return this.clients.client(service, "connect-json-http1", { token: this.adminToken, ...(orgId ? { orgId } : {}) });
  }

  async machineUser(orgId: string): Promise<FreshUser> {
    const users = this.as(UserService, orgId);
    const name = uniqueName("matrix-machine");
    const { userId } = await users.createMachineUser({ userName: name, name });
    return { userId, ...(await this.token(orgId, userId)) };
  }

  /** A human with an unverified email (so a verification code is pending) and no password. */
  async humanUser(orgId: string): Promise<FreshUser> {
    const name = uniqueName("matrix-human");
    const { userId } = await this.as(UserService, orgId).createHumanUser({
      userName: name,
      profile: { firstName: "Matrix", lastName: "Target" },
      email: { email: `${name}@example.com` },
    });
    return { userId, ...(await this.token(orgId, userId)) };
  }

  async token(orgId: string, userId: string): Promise<{ token: string; tokenId: string }> {
    const { token, tokenId } = await this.as(UserService, orgId).addPersonalAccessToken({ userId });
    return { token, tokenId };
  }

  async deactivate(orgId: string, userId: string): Promise<void> {
    await this.as(UserService, orgId).deactivateUser({ userId });
  }

  async lock(orgId: string, userId: string): Promise<void> {
    await this.as(UserService, orgId).lockUser({ userId });
  }

  async withOrgRoles<U extends { userId: string }>(user: U, orgId: string, roles: string[]): Promise<U> {
    await this.as(OrganizationService, orgId).addOrganizationMember({ userId: user.userId, roles });
    return user;
  }

  async withInstanceRoles<U extends { userId: string }>(user: U, roles: string[]): Promise<U> {
    await this.as(InstanceService).addInstanceMember({ userId: user.userId, roles });
    return user;
  }

  async organization(inactive = false): Promise<string> {
    const { organizationId } = await this.as(OrganizationService).createOrganization({ name: uniqueName("Matrix Org") });
    if (inactive) await this.as(OrganizationService).deactivateOrganization({ organizationId });
    return organizationId;
  }

  async application(orgId: string, projectId: string): Promise<string> {
    const { appId } = await this.as(ApplicationService, orgId).createOidcApplication({
      projectId,
      name: uniqueName("Matrix App"),
      redirectUris: ["https://app.example.com/cb"],
      authMethod: OidcAuthMethod.BASIC,
    });
    return appId;
  }

  async identityProvider(orgId: string, instanceLevel = false): Promise<string> {
    const { idpId } = await this.as(IdentityProviderService, orgId).createIdentityProvider({
      name: uniqueName("Matrix IDP"),
      issuer: "https://sso.example.com",
      clientId: "gatehouse",
      clientSecret: "matrix-client-secret",
      instanceLevel,
    });
    return idpId;
  }

  async deactivateApplication(orgId: string, projectId: string, appId: string): Promise<void> {
    await this.as(ApplicationService, orgId).deactivateApplication({ projectId, appId });
  }

  /**
   * A project of its own for a cell that changes a whole project (rename, state, removal): the given
   * users hold the given project roles on it, and a grant of it to `grantedOrgId` has the given members.
   */
  async project(orgId: string, grantedOrgId: string, members: { project: [string, string][]; grant: [string, string][] }, inactive = false): Promise<string> {
    const projects = this.as(ProjectService, orgId);
    const { projectId } = await projects.createProject({ name: uniqueName("Matrix Project") });
    await projects.addProjectRole({ projectId, roleKey: "reader", displayName: "Reader" });
    const { grantId } = await projects.createProjectGrant({ projectId, grantedOrganizationId: grantedOrgId, roleKeys: ["reader"] });
    for (const [userId, role] of members.project) await projects.addProjectMember({ projectId, userId, roles: [role] });
    for (const [userId, role] of members.grant) await projects.addProjectGrantMember({ projectId, grantId, userId, roles: [role] });
    if (inactive) await projects.deactivateProject({ projectId });
    return projectId;
  }

  /** A role of the project no grant hands out, ready to be removed. */
  async projectRole(orgId: string, projectId: string): Promise<string> {
    const roleKey = uniqueName("matrix-role");
    await this.as(ProjectService, orgId).addProjectRole({ projectId, roleKey, displayName: "Matrix Role" });
    return roleKey;
  }

  /** A PROJECT_OWNER_VIEWER of the project, ready to be removed. */
  async projectMember(orgId: string, projectId: string, memberOrgId: string): Promise<string> {
    const { userId } = await this.machineUser(memberOrgId);
    await this.as(ProjectService, orgId).addProjectMember({ projectId, userId, roles: ["PROJECT_OWNER_VIEWER"] });
    return userId;
  }

  /** A grant of the project to a fresh organization, handing out `reader`. */
  async projectGrant(orgId: string, projectId: string): Promise<string> {
    const { grantId } = await this.as(ProjectService, orgId).createProjectGrant({ projectId, grantedOrganizationId: await this.organization(), roleKeys: ["reader"] });
    return grantId;
  }

  /** A member of the grant (no roles: a member with no rights), ready to be removed. */
  async grantMember(orgId: string, projectId: string, grantId: string, memberOrgId: string): Promise<string> {
    const { userId } = await this.machineUser(memberOrgId);
    await this.as(ProjectService, orgId).addProjectGrantMember({ projectId, grantId, userId, roles: [] });
    return userId;
  }
}
