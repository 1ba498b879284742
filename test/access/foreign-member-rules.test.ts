import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { type Actor, createActor } from "../support/world.js";

/**
 * Whose users may be made members where (src/domain/authorization.ts mayMakeMember; the .proto comments of
 * AddOrganizationMember, AddProjectMember, AddProjectGrantMember). A role puts its holder under the scope's privilege
 * ceiling and revokes the tokens of issuers who do not hold it: given to another organization's user by a stranger,
 * it would revoke that organization's tokens and take the user out of its own user managers' hands.
 */
const t = useTestServer();
let orgA: string;
let orgB: string;
let orgC: string;
let ownerA: Actor;
let ownerB: Actor;
let projectA: string;
/** A's project granted to C. */
let grantToC: string;
let n = 0;

const orgsAs = (actor: Actor | string, orgId: string) => t.clients.client(OrganizationService, "connect-json-http1", { token: typeof actor === "string" ? actor : actor.token, orgId });
const projectsAs = (actor: Actor | string, orgId: string) => t.clients.client(ProjectService, "grpc-h2c", { token: typeof actor === "string" ? actor : actor.token, orgId });
const usersAs = (actor: Actor | string, orgId: string) => t.clients.client(UserService, "connect-json-http1", { token: typeof actor === "string" ? actor : actor.token, orgId });

/** A machine user of `orgId`, made by that organization's owner. */
async function userOf(owner: Actor, orgId: string): Promise<string> {
  const { userId } = await usersAs(owner, orgId).createMachineUser({ userName: `foreign-member-${++n}`, name: "bot" });
  return userId;
}

/** What a stranger hears of another organization's user: what it hears of a user that does not exist. */
const FOREIGN = { code: Code.FailedPrecondition, reason: "user.not_found", message: "the user does not exist" };

beforeAll(async () => {
  const admin = t.server.adminToken;
  ({ organizationId: orgA } = await orgsAs(admin, "").createOrganization({ name: "foreign-member A" }));
  ({ organizationId: orgB } = await orgsAs(admin, "").createOrganization({ name: "foreign-member B" }));
  ({ organizationId: orgC } = await orgsAs(admin, "").createOrganization({ name: "foreign-member C" }));
  ownerA = await createActor(t.clients, admin, orgA, "foreign-member-owner-a", ["ORG_OWNER"]);
  ownerB = await createActor(t.clients, admin, orgB, "foreign-member-owner-b", ["ORG_OWNER"]);
  ({ projectId: projectA } = await projectsAs(ownerA, orgA).createProject({ name: "foreign-member P" }));
  ({ grantId: grantToC } = await projectsAs(ownerA, orgA).createProjectGrant({ projectId: projectA, grantedOrganizationId: orgC, roleKeys: [] }));
});

describe("a stranger may not make another organization's user a member", () => {
  it("of its organization: user.not_found, as for a user that does not exist, and the user's own owner keeps it in hand", async () => {
    const bot = await userOf(ownerB, orgB);
    await usersAs(ownerB, orgB).addPersonalAccessToken({ userId: bot });
    expect(await failure(orgsAs(ownerA, orgA).addOrganizationMember({ userId: bot, roles: ["ORG_OWNER_VIEWER"] }))).toMatchObject(FOREIGN);
    expect(await failure(orgsAs(ownerA, orgA).addOrganizationMember({ userId: "no-such-user", roles: ["ORG_OWNER_VIEWER"] }))).toMatchObject(FOREIGN);
    // Nothing was written: A lists no such member, B's token for the bot still stands, and B's owner may still act on it.
    const { members } = await orgsAs(ownerA, orgA).listOrganizationMembers({});
    expect(members.map((member) => member.userId)).not.toContain(bot);
    const { tokens } = await usersAs(ownerB, orgB).listPersonalAccessTokens({ userId: bot });
    expect(tokens).toHaveLength(1);
    await usersAs(ownerB, orgB).lockUser({ userId: bot });
  });

  it("of its project", async () => {
    const bot = await userOf(ownerB, orgB);
    expect(await failure(projectsAs(ownerA, orgA).addProjectMember({ projectId: projectA, userId: bot, roles: ["PROJECT_OWNER_VIEWER"] }))).toMatchObject(FOREIGN);
  });

  it("of a grant of its project to a third organization", async () => {
    const bot = await userOf(ownerB, orgB);
    expect(await failure(projectsAs(ownerA, orgA).addProjectGrantMember({ projectId: projectA, grantId: grantToC, userId: bot, roles: ["PROJECT_GRANT_OWNER_VIEWER"] }))).toMatchObject(FOREIGN);
  });

  it("not even without roles: a grant membership with none is refused too", async () => {
    const bot = await userOf(ownerB, orgB);
    expect(await failure(projectsAs(ownerA, orgA).addProjectGrantMember({ projectId: projectA, grantId: grantToC, userId: bot, roles: [] }))).toMatchObject(FOREIGN);
  });
});

describe("who may", () => {
  it("the scope's own organization's users, at every level", async () => {
    const own = await userOf(ownerA, orgA);
    expect((await orgsAs(ownerA, orgA).addOrganizationMember({ userId: own, roles: ["ORG_OWNER_VIEWER"] })).details?.resourceOwner).toBe(orgA);
    expect((await projectsAs(ownerA, orgA).addProjectMember({ projectId: projectA, userId: own, roles: ["PROJECT_OWNER_VIEWER"] })).details?.resourceOwner).toBe(orgA);
    const grant = await projectsAs(ownerA, orgA).addProjectGrantMember({ projectId: projectA, grantId: grantToC, userId: own, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
    expect(grant.details?.resourceOwner).toBe(orgA);
  });

  it("a grant's granted organization's users, as members of that grant (and of no other scope of the project's)", async () => {
    const ownerC = await createActor(t.clients, t.server.adminToken, orgC, `foreign-member-owner-c-${++n}`, ["ORG_OWNER"]);
    const userOfC = await userOf(ownerC, orgC);
    const added = await projectsAs(ownerA, orgA).addProjectGrantMember({ projectId: projectA, grantId: grantToC, userId: userOfC, roles: ["PROJECT_GRANT_OWNER"] });
    expect(added.details?.resourceOwner).toBe(orgA);
    expect(await failure(projectsAs(ownerA, orgA).addProjectMember({ projectId: projectA, userId: userOfC, roles: [] }))).toMatchObject(FOREIGN);
  });

  it("a caller holding user.write in the user's organization: a user manager there, and the instance owner", async () => {
    const bot = await userOf(ownerB, orgB);
    const both = await createActor(t.clients, t.server.adminToken, orgA, `foreign-member-both-${++n}`, ["ORG_OWNER"]);
    await orgsAs(t.server.adminToken, orgB).addOrganizationMember({ userId: both.userId, roles: ["ORG_USER_MANAGER"] });
    expect((await orgsAs(both, orgA).addOrganizationMember({ userId: bot, roles: ["ORG_OWNER_VIEWER"] })).details?.resourceOwner).toBe(orgA);
    const other = await userOf(ownerB, orgB);
    const byAdmin = await projectsAs(t.server.adminToken, orgA).addProjectMember({ projectId: projectA, userId: other, roles: ["PROJECT_OWNER_VIEWER"] });
    expect(byAdmin.details?.resourceOwner).toBe(orgA);
  });

  it("a role in the user's organization that does not give user.write is not enough", async () => {
    const bot = await userOf(ownerB, orgB);
    const viewer = await createActor(t.clients, t.server.adminToken, orgA, `foreign-member-viewer-${++n}`, ["ORG_OWNER"]);
    await orgsAs(t.server.adminToken, orgB).addOrganizationMember({ userId: viewer.userId, roles: ["ORG_OWNER_VIEWER"] });
    expect(await failure(orgsAs(viewer, orgA).addOrganizationMember({ userId: bot, roles: ["ORG_OWNER_VIEWER"] }))).toMatchObject(FOREIGN);
  });
});

describe("a role another organization gives a user, as a member of a grant of its project to the user's organization", () => {
  let grantToB: string;
  beforeAll(async () => {
    ({ grantId: grantToB } = await projectsAs(ownerA, orgA).createProjectGrant({ projectId: projectA, grantedOrganizationId: orgB, roleKeys: [] }));
  });

  it("takes the user out of no hands of its own organization: its owner may still list and revoke its tokens, lock, unlock, deactivate, reactivate and remove it", async () => {
    const bot = await userOf(ownerB, orgB);
    const asOwnerB = usersAs(ownerB, orgB);
    await asOwnerB.addPersonalAccessToken({ userId: bot });
    await projectsAs(ownerA, orgA).addProjectGrantMember({ projectId: projectA, grantId: grantToB, userId: bot, roles: ["PROJECT_GRANT_OWNER"] });
    // The owner's token for the bot went with the role (its issuer does not hold it); the instance owner's is above it.
    const { tokenId } = await usersAs(t.server.adminToken, orgB).addPersonalAccessToken({ userId: bot });
    const { tokens } = await asOwnerB.listPersonalAccessTokens({ userId: bot });
    expect(tokens.map((token) => token.tokenId)).toEqual([tokenId]);
    await asOwnerB.removePersonalAccessToken({ userId: bot, tokenId });
    await asOwnerB.lockUser({ userId: bot });
    await asOwnerB.unlockUser({ userId: bot });
    await asOwnerB.deactivateUser({ userId: bot });
    await asOwnerB.reactivateUser({ userId: bot });
    await asOwnerB.removeUser({ userId: bot });
    const { members } = await projectsAs(ownerA, orgA).listProjectGrantMembers({ projectId: projectA, grantId: grantToB });
    expect(members.map((member) => member.userId)).not.toContain(bot);
  });

  it("still binds what would hand the role to the owner: no token, password or email of the user", async () => {
    const { userId: human } = await usersAs(ownerB, orgB).createHumanUser({
      userName: `foreign-member-human-${++n}`,
      profile: { firstName: "Grace", lastName: "Granted" },
      email: { email: `granted-${n}@example.com`, isEmailVerified: true },
    });
    await projectsAs(ownerA, orgA).addProjectGrantMember({ projectId: projectA, grantId: grantToB, userId: human, roles: ["PROJECT_GRANT_OWNER"] });
    const privileged = { code: Code.PermissionDenied, reason: "principal.privileged", metadata: { scope: "project_grant" } };
    const asOwnerB = usersAs(ownerB, orgB);
    expect(await failure(asOwnerB.addPersonalAccessToken({ userId: human }))).toMatchObject(privileged);
    expect(await failure(asOwnerB.setPassword({ userId: human, password: "Taken-Over-2026!" }))).toMatchObject(privileged);
    expect(await failure(asOwnerB.setEmail({ userId: human, email: "taken@example.com" }))).toMatchObject(privileged);
  });

  it("is the only exception: a role in another organization's scope given with the user's organization's consent binds its lifecycle too", async () => {
    // The instance owner holds user.write in B: B's user made an owner of A, and a member of A's grant to C.
    const ownerOfA = await userOf(ownerB, orgB);
    await orgsAs(t.server.adminToken, orgA).addOrganizationMember({ userId: ownerOfA, roles: ["ORG_OWNER"] });
    const grantOwnerForC = await userOf(ownerB, orgB);
    await projectsAs(t.server.adminToken, orgA).addProjectGrantMember({ projectId: projectA, grantId: grantToC, userId: grantOwnerForC, roles: ["PROJECT_GRANT_OWNER"] });
    const userManager = await createActor(t.clients, t.server.adminToken, orgB, `foreign-member-um-${++n}`, ["ORG_USER_MANAGER"]);
    for (const userId of [ownerOfA, grantOwnerForC]) {
      expect(await failure(usersAs(userManager, orgB).lockUser({ userId }))).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
      expect(await failure(usersAs(userManager, orgB).removeUser({ userId }))).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
    }
  });

  it("binds the lifecycle when the role is in the user's own organization's scope: a user manager may not lock an owner of a grant of its organization's project", async () => {
    const { projectId: projectB } = await projectsAs(ownerB, orgB).createProject({ name: `foreign-member Q ${++n}` });
    const { grantId } = await projectsAs(ownerB, orgB).createProjectGrant({ projectId: projectB, grantedOrganizationId: orgC, roleKeys: [] });
    const grantOwner = await userOf(ownerB, orgB);
    await projectsAs(ownerB, orgB).addProjectGrantMember({ projectId: projectB, grantId, userId: grantOwner, roles: ["PROJECT_GRANT_OWNER"] });
    const userManager = await createActor(t.clients, t.server.adminToken, orgB, `foreign-member-um-${++n}`, ["ORG_USER_MANAGER"]);
    expect(await failure(usersAs(userManager, orgB).lockUser({ userId: grantOwner }))).toMatchObject({ code: Code.PermissionDenied, reason: "principal.privileged" });
  });
});
