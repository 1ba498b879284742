import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { type Actor, buildWorld, createActor, type World } from "../support/world.js";

/**
 * The privilege ceiling judges a grant role in the project the grant belongs to: a project's owner holds every
 * permission of its grants' owners there, so it covers them — and only for its own project's grants (API.md role
 * table; src/domain/authorization.ts requireCoversPrincipal).
 */
const t = useTestServer();
let w: World;
let manager: Actor;
let n = 0;

const projects = () => t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId: w.orgA });
const usersAs = (actor: Actor) => t.clients.client(UserService, "connect-json-http1", { token: actor.token, orgId: w.orgB });

/** A user of organization B whose only role is PROJECT_GRANT_OWNER on `grantId` (a grant of `projectId` to B). */
async function grantOwner(projectId: string, grantId: string): Promise<string> {
  const { userId } = await createActor(t.clients, t.server.adminToken, w.orgB, `ceiling-scope-${++n}`);
  await projects().addProjectGrantMember({ projectId, grantId, userId, roles: ["PROJECT_GRANT_OWNER"] });
  return userId;
}

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "ceiling-scope");
  // Manages organization B's users and owns project P1 of organization A.
  manager = await createActor(t.clients, t.server.adminToken, w.orgB, "ceiling-scope-manager", ["ORG_USER_MANAGER"]);
  await projects().addProjectMember({ projectId: w.p1, userId: manager.userId, roles: ["PROJECT_OWNER"] });
});

describe("the privilege ceiling over a project grant's owner", () => {
  it("is covered by the owner of the grant's project: a user manager who owns P1 may mint a token for G1's owner", async () => {
    const target = await grantOwner(w.p1, w.g1);
    const minted = await usersAs(manager).addPersonalAccessToken({ userId: target });
    expect(minted.token).not.toBe("");
  });

  it("is not covered by the owner of another project: the same manager may not for the owner of a grant of P2", async () => {
    const { grantId } = await projects().createProjectGrant({ projectId: w.p2, grantedOrganizationId: w.orgB, roleKeys: [] });
    const target = await grantOwner(w.p2, grantId);
    expect(await failure(usersAs(manager).addPersonalAccessToken({ userId: target }))).toMatchObject({
      code: Code.PermissionDenied,
      reason: "principal.privileged",
      metadata: { scope: "project_grant" },
    });
  });
});
