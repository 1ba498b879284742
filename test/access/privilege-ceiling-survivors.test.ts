import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { authenticate } from "../../src/access/authenticate.js";
import { addPersonalAccessToken } from "../../src/commands/personal-access-token.js";
import type { Caller } from "../../src/context.js";
import { interleavedDeps } from "../commands/rules-support.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";

/**
 * The privilege ceiling guards *another* user's credentials (README "Privilege ceiling", src/access/privilege-ceiling.ts):
 * a user manager issuing a token for itself cannot gain anything it does not hold, so it is not held to the ceiling —
 * a role granted to it while its call is under way (after the call authenticated it, or just before the token is
 * written) neither refuses nor fails the issuance, and the token works.
 */
const t = useTestServer();
let orgId: string;
let projectId: string;
let count = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Self issuance" }));
  ({ projectId } = await t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId }).createProject({ name: "Self issuance" }));
});

/** A user manager of the organization, and the principal its next call authenticates as. */
async function userManager(): Promise<{ userId: string; caller: Caller }> {
  count += 1;
  const actor = await createActor(t.clients, t.server.adminToken, orgId, `self-issuer-${count}`, ["ORG_USER_MANAGER"]);
  const principal = await authenticate(t.server.gatehouse.deps, `Bearer ${actor.token}`);
  return { userId: actor.userId, caller: { principal, requestedOrgId: undefined } };
}

const grantProjectOwner = (userId: string) =>
  t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId }).addProjectMember({ projectId, userId, roles: ["PROJECT_OWNER"] });

async function expectWorkingToken(userId: string, token: string) {
  const asHolder = t.clients.client(UserService, "connect-json-http1", { token });
  expect((await asHolder.getUser({ userId })).user?.userId).toBe(userId);
}

describe("a user manager issuing a token for itself", () => {
  it("gets it when it was granted a role after its call authenticated it", async () => {
    const { userId, caller } = await userManager();
    await grantProjectOwner(userId);
    const issued = await addPersonalAccessToken(t.server.gatehouse.deps, caller, { userId });
    await expectWorkingToken(userId, issued.token);
  });

  it("gets it when it is granted a role just before the token is written", async () => {
    const { userId, caller } = await userManager();
    const deps = interleavedDeps(t, () => grantProjectOwner(userId));
    const issued = await addPersonalAccessToken(deps, caller, { userId });
    await expectWorkingToken(userId, issued.token);
  });
});
