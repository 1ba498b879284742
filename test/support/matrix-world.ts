import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import type { CallOptions, Clients } from "./clients.js";
import { FreshTargets } from "./matrix-fresh.js";
import { type Actor, buildWorld, createActor, type World } from "./world.js";

/**
 * The callers of the matrix, one column each. Role columns hold that role at its level over the
 * target scope: organization A, project P1 of A, grant G1 of P1 (granted to B). The rest have no
 * right there: an ORG_OWNER of C (naming A, or naming its own C), owners of a sibling
 * project and grant, a user of A without roles; `self` is the target user of the row.
 */
export const COLUMNS = [
  "anonymous",
  "IAM_OWNER",
  "IAM_OWNER_VIEWER",
  "IAM_LOGIN_CLIENT",
  "ORG_OWNER",
  "ORG_OWNER_VIEWER",
  "ORG_USER_MANAGER",
  "ORG_SETTINGS_MANAGER",
  "PROJECT_OWNER",
  "PROJECT_OWNER_VIEWER",
  "PROJECT_GRANT_OWNER",
  "PROJECT_GRANT_OWNER_VIEWER",
  "otherOrgOwner→targetOrg",
  "otherOrgOwner→ownOrg",
  "otherProjectOwner",
  "otherGrantOwner",
  "sameOrgNoRoles",
  "self",
] as const;
export type Column = (typeof COLUMNS)[number];

/** Columns without any right in the target scope: the existence rule is checked for them. */
export const STRANGERS: readonly Column[] = ["otherOrgOwner→targetOrg", "otherOrgOwner→ownOrg", "otherProjectOwner", "otherGrantOwner", "sameOrgNoRoles"];

export interface MatrixWorld extends World {
  defaultOrg: string;
  adminId: string;
  callers: Record<Exclude<Column, "anonymous" | "self" | "otherOrgOwner→ownOrg" | "otherOrgOwner→targetOrg">, Actor> & { otherOrgOwner: Actor };
  /** Owner and user manager of the default organization: the bootstrap admin's own organization. */
  defaultOrgOwner: Actor;
  defaultOrgUserManager: Actor;
  fresh: FreshTargets;
}

/** Builds organizations A/B/C, projects, grants (world.ts) and one actor per column, with the admin token. */
export async function buildMatrixWorld(clients: Clients, adminToken: string): Promise<MatrixWorld> {
  const world = await buildWorld(clients, adminToken, "authz");
  const fresh = new FreshTargets(clients, adminToken);
  const { users } = await clients.client(UserService, "connect-json-http1", { token: adminToken }).listUsers({ userName: "admin" });
  const admin = users[0];
  if (!admin?.details) throw new Error("the bootstrap admin is missing from its organization");
  const defaultOrg = admin.details.resourceOwner;
  const actor = (org: string, name: string, roles: string[] = []) => createActor(clients, adminToken, org, `authz-${name}`, roles);

  const [iamOwner, iamOwnerViewer, iamLoginClient] = await Promise.all([actor(defaultOrg, "iam-owner"), actor(defaultOrg, "iam-viewer"), actor(defaultOrg, "iam-login-client")]);
  await fresh.withInstanceRoles(iamOwner, ["IAM_OWNER"]);
  await fresh.withInstanceRoles(iamOwnerViewer, ["IAM_OWNER_VIEWER"]);
  await fresh.withInstanceRoles(iamLoginClient, ["IAM_LOGIN_CLIENT"]);
  const [orgOwnerViewer, orgUserManager, orgSettingsManager, projectOwnerViewer, grantOwnerViewer, defaultOrgOwner, defaultOrgUserManager] =
    await Promise.all([
      actor(world.orgA, "org-viewer", ["ORG_OWNER_VIEWER"]),
      actor(world.orgA, "user-manager", ["ORG_USER_MANAGER"]),
      actor(world.orgA, "settings-manager", ["ORG_SETTINGS_MANAGER"]),
      actor(world.orgB, "project-viewer"),
      actor(world.orgB, "grant-viewer"),
      actor(defaultOrg, "default-owner", ["ORG_OWNER"]),
      actor(defaultOrg, "default-user-manager", ["ORG_USER_MANAGER"]),
    ]);
  const projects = clients.client(ProjectService, "connect-json-http1", { token: adminToken, orgId: world.orgA });
  await projects.addProjectMember({ projectId: world.p1, userId: projectOwnerViewer.userId, roles: ["PROJECT_OWNER_VIEWER"] });
  await projects.addProjectGrantMember({ projectId: world.p1, grantId: world.g1, userId: grantOwnerViewer.userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });

  const { actors } = world;
  return {
    ...world,
    defaultOrg,
    adminId: admin.userId,
    defaultOrgOwner,
    defaultOrgUserManager,
    fresh,
    callers: {
      IAM_OWNER: iamOwner,
      IAM_OWNER_VIEWER: iamOwnerViewer,
      IAM_LOGIN_CLIENT: iamLoginClient,
      ORG_OWNER: actors.orgOwnerA,
      ORG_OWNER_VIEWER: orgOwnerViewer,
      ORG_USER_MANAGER: orgUserManager,
      ORG_SETTINGS_MANAGER: orgSettingsManager,
      PROJECT_OWNER: actors.projectOwnerP1,
      PROJECT_OWNER_VIEWER: projectOwnerViewer,
      PROJECT_GRANT_OWNER: actors.grantOwnerG1,
      PROJECT_GRANT_OWNER_VIEWER: grantOwnerViewer,
      otherOrgOwner: actors.orgOwnerC,
      otherProjectOwner: actors.projectOwnerP2,
      otherGrantOwner: actors.grantOwnerG2,
      sameOrgNoRoles: actors.nobody,
    },
  };
}

/**
 * The headers a column calls with. Everyone with a role in the target scope (and the strangers who
 * try to reach it) names the target organization with `x-service-orgid`: project and grant members
 * belong to organization B and must select A, the project's owner. `otherOrgOwner→ownOrg` names its
 * own organization C; `sameOrgNoRoles` sends no header and so acts in its own organization, A.
 */
export function callOptions(world: MatrixWorld, column: Column, targetOrg: string, selfToken: string | undefined): CallOptions {
  switch (column) {
    case "anonymous":
      return {};
    case "self":
      if (!selfToken) throw new Error("this row has no target user to call as");
      return { token: selfToken, orgId: targetOrg };
    case "otherOrgOwner→targetOrg":
      return { token: world.callers.otherOrgOwner.token, orgId: targetOrg };
    case "otherOrgOwner→ownOrg":
      return { token: world.callers.otherOrgOwner.token, orgId: world.orgC };
    case "sameOrgNoRoles":
      return { token: world.callers.sameOrgNoRoles.token };
    default:
      return { token: world.callers[column].token, orgId: targetOrg };
  }
}
