import { ApiAuthMethod, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import type { FreshUser } from "./matrix-fresh.js";
import { uniqueName } from "./matrix-fresh.js";
import type { MatrixWorld } from "./matrix-world.js";

/** The request of one cell, built fresh for it; `selfToken` is the target user's own token. */
export interface Prepared {
  input: Record<string, unknown>;
  selfToken?: string;
}

/** Builds a cell's request. Write requests would succeed for an allowed caller, so a missing check shows. */
export type RequestBuilder = (w: MatrixWorld) => Promise<Prepared>;

const fixed =
  (input: (w: MatrixWorld) => Record<string, unknown>): RequestBuilder =>
  async (w) => ({ input: input(w) });

/** A target user of organization A, in one of the variants the privilege ceiling distinguishes. */
export type TargetKind = "plain" | "orgOwner" | "iamOwner";

async function targetUser(w: MatrixWorld, human: boolean, kind: TargetKind): Promise<FreshUser> {
  const user = human ? await w.fresh.humanUser(w.orgA) : await w.fresh.machineUser(w.orgA);
  if (kind === "orgOwner") return w.fresh.withOrgRoles(user, w.orgA, ["ORG_OWNER"]);
  if (kind === "iamOwner") return w.fresh.withInstanceRoles(user, ["IAM_OWNER"]);
  return user;
}

/** A request about a fresh target user; the target may also call it as itself. */
const onUser =
  (human: boolean, kind: TargetKind, input: (user: FreshUser, w: MatrixWorld) => Record<string, unknown> | Promise<Record<string, unknown>>): RequestBuilder =>
  async (w) => {
    const user = await targetUser(w, human, kind);
    return { input: await input(user, w), selfToken: user.token };
  };

const samlMetadata = (entityId: string) =>
  `<?xml version="1.0"?><md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">` +
  `<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">` +
  `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.com/acs" index="0"/>` +
  `</md:SPSSODescriptor></md:EntityDescriptor>`;

/** An SMTP server that is never reached: the port is closed, so a test dial fails at once. */
const smtpConfig = { senderAddress: "noreply@example.com", senderName: "Gatehouse Matrix", tls: false, host: "127.0.0.1:9", user: "" };

/** A whole-project change: a project of the cell's own, on which the project and grant columns hold their roles. */
const ownProject =
  (input: (projectId: string) => Record<string, unknown>, inactive = false): RequestBuilder =>
  async (w) => {
    const c = w.callers;
    const members = {
      project: [[c.PROJECT_OWNER.userId, "PROJECT_OWNER"], [c.PROJECT_OWNER_VIEWER.userId, "PROJECT_OWNER_VIEWER"]] as [string, string][],
      grant: [[c.PROJECT_GRANT_OWNER.userId, "PROJECT_GRANT_OWNER"], [c.PROJECT_GRANT_OWNER_VIEWER.userId, "PROJECT_GRANT_OWNER_VIEWER"]] as [string, string][],
    };
    return { input: input(await w.fresh.project(w.orgA, w.orgB, members, inactive)) };
  };

export const requests = {
  getInstance: fixed(() => ({})),
  getLockoutPolicy: fixed(() => ({})),
  /** The default limit: the matrix's callers sign in with nothing, so the policy they set changes nothing for them. */
  setLockoutPolicy: fixed(() => ({ maxPasswordAttempts: 10 })),
  addInstanceMember: async (w: MatrixWorld) => ({ input: { userId: (await w.fresh.machineUser(w.orgA)).userId, roles: ["IAM_OWNER_VIEWER"] } }),

  createOrganization: fixed(() => ({ name: uniqueName("Matrix Org") })),
  getOrganization: fixed((w) => ({ organizationId: w.orgA })),
  addOrganizationMember: async (w: MatrixWorld) => ({ input: { userId: (await w.fresh.machineUser(w.orgA)).userId, roles: ["ORG_OWNER_VIEWER"] } }),
  listInstanceMembers: fixed(() => ({ pageSize: 5 })),
  /** A fresh instance viewer each cell (never the last IAM_OWNER), so an allowed caller's call succeeds. */
  removeInstanceMember: async (w: MatrixWorld) => ({ input: { userId: (await w.fresh.withInstanceRoles(await w.fresh.machineUser(w.orgA), ["IAM_OWNER_VIEWER"])).userId } }),
  listOrganizations: fixed(() => ({ pageSize: 5 })),
  listOrganizationMembers: fixed(() => ({ pageSize: 5 })),
  removeOrganizationMember: async (w: MatrixWorld) => ({
    input: { userId: (await w.fresh.withOrgRoles(await w.fresh.machineUser(w.orgA), w.orgA, ["ORG_OWNER_VIEWER"])).userId },
  }),
  /** A fresh organization each cell: deactivating A would shut out the matrix's own callers. */
  deactivateOrganization: async (w: MatrixWorld) => ({ input: { organizationId: await w.fresh.organization() } }),
  reactivateOrganization: async (w: MatrixWorld) => ({ input: { organizationId: await w.fresh.organization(true) } }),

  createHumanUser: fixed(() => {
    const userName = uniqueName("matrix-new-human");
    return { userName, profile: { firstName: "New", lastName: "Human" }, email: { email: `${userName}@example.com` } };
  }),
  importHumanUsers: fixed(() => {
    const userName = uniqueName("matrix-imported");
    return { users: [{ user: { userName, profile: { firstName: "Imported", lastName: "Human" }, email: { email: `${userName}@example.com` } } }] };
  }),
  createMachineUser: fixed(() => ({ userName: uniqueName("matrix-new-machine"), name: "New Machine" })),
  listUsers: fixed(() => ({ pageSize: 5 })),
  verifyEmail: onUser(true, "plain", (user) => ({ userId: user.userId, verificationCode: "WRONG1" })),
  getUser: onUser(false, "plain", (user) => ({ userId: user.userId })),
  setEmail: (kind: TargetKind) => onUser(true, kind, (user) => ({ userId: user.userId, email: `${uniqueName("matrix-new-mail")}@example.com` })),
  resendEmailCode: (kind: TargetKind, returnCode: boolean) => onUser(true, kind, (user) => ({ userId: user.userId, returnCode })),
  addPersonalAccessToken: (kind: TargetKind) => onUser(false, kind, (user) => ({ userId: user.userId })),
  listPersonalAccessTokens: (kind: TargetKind) => onUser(false, kind, (user) => ({ userId: user.userId })),
  /** Removes a second token of the target, so `self` still holds the one it calls with. */
  removePersonalAccessToken: (kind: TargetKind) =>
    onUser(false, kind, async (user, w) => ({ userId: user.userId, tokenId: (await w.fresh.token(w.orgA, user.userId)).tokenId })),
  /** Deactivate, lock and remove: a fresh target each cell, so an allowed caller's call succeeds. */
  deactivateUser: (kind: TargetKind) => onUser(false, kind, (user) => ({ userId: user.userId })),
  lockUser: (kind: TargetKind) => onUser(false, kind, (user) => ({ userId: user.userId })),
  removeUser: (kind: TargetKind) => onUser(false, kind, (user) => ({ userId: user.userId })),
  /** A wrong password: an allowed caller gets past the permission check to password.invalid. */
  verifyPassword: onUser(true, "plain", (user) => ({ user: { case: "userId", value: user.userId }, password: "Matrix-Wrong-Password-1" })),
  setPassword: (kind: TargetKind) => onUser(true, kind, (user) => ({ userId: user.userId, password: "Matrix-Password-1" })),
  /** Reactivate and unlock: the target is deactivated / locked first (by the admin), so the call would succeed. */
  reactivateUser: (kind: TargetKind) =>
    onUser(false, kind, async (user, w) => {
      await w.fresh.deactivate(w.orgA, user.userId);
      return { userId: user.userId };
    }),
  unlockUser: (kind: TargetKind) =>
    onUser(false, kind, async (user, w) => {
      await w.fresh.lock(w.orgA, user.userId);
      return { userId: user.userId };
    }),

  createProject: fixed(() => ({ name: uniqueName("Matrix Project") })),
  getProject: fixed((w) => ({ projectId: w.p1 })),
  addProjectRole: fixed((w) => ({ projectId: w.p1, roleKey: uniqueName("role"), displayName: "Matrix Role" })),
  addProjectMember: async (w: MatrixWorld) => ({
    input: { projectId: w.p1, userId: (await w.fresh.machineUser(w.orgA)).userId, roles: ["PROJECT_OWNER_VIEWER"] },
  }),
  createProjectGrant: async (w: MatrixWorld) => ({ input: { projectId: w.p1, grantedOrganizationId: await w.fresh.organization(), roleKeys: ["reader"] } }),
  getProjectGrant: fixed((w) => ({ projectId: w.p1, grantId: w.g1 })),
  addProjectGrantMember: async (w: MatrixWorld) => ({
    input: { projectId: w.p1, grantId: w.g1, userId: (await w.fresh.machineUser(w.orgB)).userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] },
  }),
  listProjectGrantMembers: fixed((w) => ({ projectId: w.p1, grantId: w.g1 })),
  removeProjectGrantMember: async (w: MatrixWorld) => ({
    input: { projectId: w.p1, grantId: w.g1, userId: await w.fresh.grantMember(w.orgA, w.p1, w.g1, w.orgB) },
  }),
  listProjects: fixed(() => ({})),
  listProjectRoles: fixed((w) => ({ projectId: w.p1 })),
  listProjectMembers: fixed((w) => ({ projectId: w.p1 })),
  listProjectGrants: fixed((w) => ({ projectId: w.p1 })),
  ownProject,
  updateProject: ownProject((projectId) => ({ projectId, name: uniqueName("Renamed Project") })),
  removeProjectRole: async (w: MatrixWorld) => ({ input: { projectId: w.p1, roleKey: await w.fresh.projectRole(w.orgA, w.p1) } }),
  removeProjectMember: async (w: MatrixWorld) => ({ input: { projectId: w.p1, userId: await w.fresh.projectMember(w.orgA, w.p1, w.orgB) } }),
  updateProjectGrant: async (w: MatrixWorld) => ({ input: { projectId: w.p1, grantId: await w.fresh.projectGrant(w.orgA, w.p1), roleKeys: [] } }),
  removeProjectGrant: async (w: MatrixWorld) => ({ input: { projectId: w.p1, grantId: await w.fresh.projectGrant(w.orgA, w.p1) } }),

  createOidcApplication: fixed((w) => ({
    projectId: w.p1,
    name: uniqueName("Matrix OIDC"),
    redirectUris: ["https://app.example.com/cb"],
    authMethod: OidcAuthMethod.BASIC,
  })),
  createApiApplication: fixed((w) => ({ projectId: w.p1, name: uniqueName("Matrix API"), authMethod: ApiAuthMethod.BASIC })),
  createSamlApplication: fixed((w) => ({
    projectId: w.p1,
    name: uniqueName("Matrix SAML"),
    metadata: { case: "metadataXml", value: samlMetadata(`https://${uniqueName("sp")}.example.com/saml`) },
  })),
  getApplication: fixed((w) => ({ projectId: w.p1, appId: w.appId })),
  listApplications: fixed((w) => ({ projectId: w.p1 })),
  updateApplication: async (w: MatrixWorld) => ({ input: { projectId: w.p1, appId: await w.fresh.application(w.orgA, w.p1), name: uniqueName("Renamed") } }),
  /** Application lifecycle: a fresh (confidential) app each cell, so an allowed caller's call succeeds. */
  freshApplication: async (w: MatrixWorld) => ({ input: { projectId: w.p1, appId: await w.fresh.application(w.orgA, w.p1) } }),
  reactivateApplication: async (w: MatrixWorld) => {
    const appId = await w.fresh.application(w.orgA, w.p1);
    await w.fresh.deactivateApplication(w.orgA, w.p1, appId);
    return { input: { projectId: w.p1, appId } };
  },

  createIdentityProvider: (instanceLevel: boolean) =>
    fixed(() => ({
      name: uniqueName("Matrix SSO"),
      issuer: "https://sso.example.com",
      clientId: "gatehouse",
      clientSecret: "matrix-client-secret",
      instanceLevel,
    })),
  getIdentityProvider: fixed((w) => ({ idpId: w.idpId })),
  listIdentityProviders: fixed(() => ({})),
  updateIdentityProvider: async (w: MatrixWorld) => ({ input: { idpId: await w.fresh.identityProvider(w.orgA), name: uniqueName("Renamed SSO") } }),
  /** A fresh IDP of organization A, or of the instance, each cell. */
  removeIdentityProvider: (instanceLevel: boolean) => async (w: MatrixWorld) => ({ input: { idpId: await w.fresh.identityProvider(w.orgA, instanceLevel) } }),

  createSmtpConfig: fixed(() => smtpConfig),
  getSmtpConfig: fixed(() => ({})),
  updateSmtpConfig: fixed(() => ({ ...smtpConfig, senderName: uniqueName("Gatehouse") })),
  setSmtpPassword: fixed(() => ({ password: "matrix-smtp-password" })),
  testSmtpConfig: fixed(() => ({ receiverAddress: "someone@example.com", config: smtpConfig, password: "matrix-smtp-password" })),
  removeSmtpConfig: fixed(() => ({})),

  listEvents: fixed(() => ({ pageSize: 1 })),

  healthCheck: fixed(() => ({ service: "" })),
  healthList: fixed(() => ({})),
  reflection: fixed(() => ({ host: "", messageRequest: { case: "listServices", value: "" } })),
} satisfies Record<string, RequestBuilder | ((...args: never[]) => RequestBuilder)>;
