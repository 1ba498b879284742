import { beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { membershipFingerprint } from "../../src/store/fingerprints.js";
import type { Commit } from "../../src/store/commit.js";
import { storeEngines, useStore } from "./engines.js";
import { commitOf, machineUser } from "./fixtures.js";

// The row writes of a commit, on every engine (src/store/sqlite/sqlite-writes.ts, src/store/postgres/pg-writes.ts).
// A conditional write whose condition no longer holds when the transaction runs (the row is gone, or changed by a
// commit that won a race) fails the whole commit with aborted `store.condition_failed` and a message that says what
// changed; a write whose scope was removed meanwhile answers as the read would have (not_found / failed_precondition,
// naming the missing object in the metadata).

type Write = Commit["writes"][number];

const user = machineUser;
const token = (id: string, userId: string, issuerUserId: string | null = null): Write => ({
  kind: "token.insert",
  row: { id, userId, secretHash: `hash-${id}`, expiresAt: null, createdAt: 0, issuerUserId },
});
const project = (id: string): Write => ({ kind: "project.insert", row: { id, instanceId: "i1", orgId: "o1", name: id, nameKey: id, state: "active" } });
const application = (id: string, projectId: string, clientSecretHash: string | null = null): Write => ({
  kind: "application.insert",
  row: { id, projectId, name: id, nameKey: id, state: "active", type: "api", clientId: `client-${id}`, clientSecretHash, settings: { type: "api", authMethod: 0 } },
});
const identityProvider = (id: string): Write => ({
  kind: "identityProvider.insert",
  row: { id, instanceId: "i1", orgId: "o1", ownerId: "o1", name: id, nameKey: id, issuer: "https://idp.example", clientId: "c", clientSecretSealed: "v1.x", scopes: [], stylingType: 0, autoRegister: false },
});
const link = (userId: string, idpId: string, externalUserId: string): Write => ({ kind: "userIdpLink.insert", row: { userId, idpId, externalUserId, displayName: externalUserId } });
const code = (id: string, userId: string): Write => ({ kind: "code.replace", row: { id, userId, kind: "email", digest: "d", expiresAt: 1, attempts: 0, usedAt: null } });
const membership = (id: string, userId: string, level: "org" | "project" | "project_grant", scopeId: string, roles: string[]): Write => ({
  kind: "membership.insert",
  row: { id, userId, level, scopeId, ownerOrgId: "o1", projectId: level === "project_grant" ? "p-of-grant" : null, roles },
});

/** The commit fails as a whole with aborted store.condition_failed, its message saying what changed. */
async function expectConditionFailed(result: Promise<unknown>, message: RegExp) {
  const error = await result.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect(error).toMatchObject({ kind: "aborted", reason: "store.condition_failed" });
  expect((error as Error).message).toMatch(message);
}

describe.each(storeEngines())("row writes on $name", (engine) => {
  const { store } = useStore(engine);
  const commit = (...writes: Write[]) => store().commit(commitOf(writes));

  beforeEach(async () => {
    await commit({ kind: "instance.insert", row: { id: "i1", name: "I", defaultOrgId: "o1" } }, { kind: "organization.insert", row: { id: "o1", instanceId: "i1", name: "O", nameKey: "o", state: "active" } });
  });

  describe("a conditional write on a row that is gone fails the commit with a message naming it", () => {
    it("organization state", async () => {
      await expectConditionFailed(commit({ kind: "organization.setState", id: "no-such-org", state: "inactive" }), /organization is gone/);
      // Setting the state it has already: another commit changed it first.
      await expectConditionFailed(commit({ kind: "organization.setState", id: "o1", state: "active" }), /changed concurrently/);
    });

    it("a token", async () => {
      await expectConditionFailed(commit({ kind: "token.delete", id: "no-such-token" }), /token is gone/);
    });

    it("a project: rename, state, removal", async () => {
      await expectConditionFailed(commit({ kind: "project.rename", id: "gone", name: "N", nameKey: "n" }), /project is gone/);
      await expectConditionFailed(commit({ kind: "project.setState", id: "gone", state: "inactive" }), /project is gone/);
      await expectConditionFailed(commit({ kind: "project.delete", id: "gone" }), /project is gone/);
    });

    it("a project role", async () => {
      await commit(project("p1"));
      await expectConditionFailed(commit({ kind: "projectRole.delete", projectId: "p1", roleKey: "never-defined" }), /project role is gone/);
    });

    it("a project grant", async () => {
      await expectConditionFailed(commit({ kind: "projectGrant.delete", id: "no-such-grant" }), /grant is gone/);
    });

    it("an application: state, removal", async () => {
      await expectConditionFailed(commit({ kind: "application.setState", id: "gone", state: "inactive" }), /application is gone/);
      await expectConditionFailed(commit({ kind: "application.delete", id: "gone" }), /application is gone/);
    });

    it("a user's link to an identity provider", async () => {
      await commit(user("u1"), identityProvider("idp1"));
      await expectConditionFailed(commit({ kind: "userIdpLink.delete", idpId: "idp1", externalUserId: "never-linked" }), /IDP link is gone/);
    });

    it("an identity provider", async () => {
      await expectConditionFailed(commit({ kind: "identityProvider.delete", id: "gone" }), /identity provider is gone/);
    });

    it("a user: deactivation, lock, removal", async () => {
      await expectConditionFailed(commit({ kind: "user.setInactive", id: "gone", inactive: true }), /user is gone/);
      await expectConditionFailed(commit({ kind: "user.setLocked", id: "gone", locked: true }), /user is gone/);
      await expectConditionFailed(commit({ kind: "user.delete", id: "gone" }), /user is gone/);
    });

    it("a one-time code that is used up", async () => {
      await commit(user("u1"), code("c1", "u1"));
      await commit({ kind: "code.claimAttempt", id: "c1", max: 1 });
      await expectConditionFailed(commit({ kind: "code.claimAttempt", id: "c1", max: 1 }), /code is used up or void/);
    });

    it("a one-time code that was used, however many attempts it has left", async () => {
      await commit(user("u1"), code("c1", "u1"));
      await commit({ kind: "code.use", id: "c1", at: 1 });
      await expectConditionFailed(commit({ kind: "code.claimAttempt", id: "c1", max: 100 }), /code is used up or void/);
    });
  });

  describe("what a command checked must still hold at commit time", () => {
    it("a token is not issued when the user's roles changed since they were read", async () => {
      await commit(user("u1"), membership("m1", "u1", "org", "o1", ["ORG_OWNER"]));
      const checked = membershipFingerprint([{ id: "m1", roles: ["ORG_USER"] }]);
      await expectConditionFailed(commit({ ...(token("t1", "u1") as Extract<Write, { kind: "token.insert" }>), checkedMemberships: checked }), /roles changed/);
      expect(await store().findTokenById("t1")).toBeUndefined();
    });

    it("a role is not granted when the user's tokens changed since they were read", async () => {
      await commit(user("admin"), user("u1"), token("t1", "u1", "admin"));
      const grant = membership("m1", "u1", "org", "o1", ["ORG_OWNER"]) as Extract<Write, { kind: "membership.insert" }>;
      // The command saw no token issued by someone else; one was issued since.
      await expectConditionFailed(commit({ ...grant, checkedTokens: "" }), /tokens changed/);
      expect(await store().findMembership("u1", "org", "o1")).toBeUndefined();
    });

    it("the last holder of a role that must be kept is not removed; the message names the role", async () => {
      await commit(user("u1"), membership("m1", "u1", "org", "o1", ["ORG_OWNER"]));
      await expectConditionFailed(commit({ kind: "membership.delete", id: "m1", keepRoleHolder: "ORG_OWNER" }), /last holder of ORG_OWNER/);
      expect(await store().findMembership("u1", "org", "o1")).toBeDefined();
    });

    it("a project that has only an application is still referenced: it is not removed", async () => {
      await commit(project("p1"), application("a1", "p1"));
      await expectConditionFailed(commit({ kind: "project.delete", id: "p1" }), /added to the project/);
      expect(await store().findProjectById("p1")).toBeDefined();
      expect(await store().findApplicationById("a1")).toBeDefined();
    });

    it("a grant holds only role keys its project defines at commit time; a grant of no role keys needs none", async () => {
      await commit(project("p1"), { kind: "organization.insert", row: { id: "o2", instanceId: "i1", name: "O2", nameKey: "o2", state: "active" } });
      await commit({ kind: "projectRole.insert", row: { projectId: "p1", roleKey: "viewer", displayName: "Viewer" } });
      await expectConditionFailed(
        commit({ kind: "projectGrant.insert", row: { id: "g1", projectId: "p1", grantedOrgId: "o2", roleKeys: ["viewer", "removed"] } }),
        /role key was removed/,
      );
      await commit({ kind: "projectGrant.insert", row: { id: "g1", projectId: "p1", grantedOrgId: "o2", roleKeys: [] } });
      await commit({ kind: "projectGrant.setRoleKeys", id: "g1", roleKeys: ["viewer"] });
      await commit({ kind: "projectGrant.setRoleKeys", id: "g1", roleKeys: [] });
      expect((await store().findProjectGrantById("g1"))?.roleKeys).toEqual([]);
    });

    it("a first client secret replaces none: the application had no secret, and gets one", async () => {
      await commit(project("p1"), application("a1", "p1", null));
      await commit({ kind: "application.replaceSecretHash", id: "a1", previousHash: null, hash: "h1" });
      expect((await store().findApplicationById("a1"))?.clientSecretHash).toBe("h1");
      // The condition still holds the other way: a secret replaced meanwhile is not overwritten.
      await expectConditionFailed(commit({ kind: "application.replaceSecretHash", id: "a1", previousHash: null, hash: "h2" }), /secret was replaced/);
      expect((await store().findApplicationById("a1"))?.clientSecretHash).toBe("h1");
    });
  });

  describe("a membership or link whose scope was removed meanwhile", () => {
    it("a project membership of a removed project is not_found project.not_found naming the project", async () => {
      await commit(user("u1"));
      const failed = commit(membership("m1", "u1", "project", "gone-project", ["PROJECT_OWNER"]));
      await expect(failed).rejects.toBeInstanceOf(DomainError);
      await expect(failed).rejects.toMatchObject({ kind: "not_found", reason: "project.not_found", metadata: { projectId: "gone-project" }, message: expect.stringMatching(/project was removed/) });
    });

    it("a grant membership of a removed grant is not_found project.grant.not_found naming the grant", async () => {
      await commit(user("u1"));
      const failed = commit(membership("m1", "u1", "project_grant", "gone-grant", ["PROJECT_GRANT_OWNER"]));
      await expect(failed).rejects.toMatchObject({ kind: "not_found", reason: "project.grant.not_found", metadata: { grantId: "gone-grant" }, message: expect.stringMatching(/grant was removed/) });
    });

    it("a link to a removed identity provider is failed_precondition idp.not_found naming the configuration", async () => {
      await commit(user("u1"));
      const failed = commit(link("u1", "gone-idp", "ext-1"));
      await expect(failed).rejects.toMatchObject({ kind: "failed_precondition", reason: "idp.not_found", metadata: { configId: "gone-idp" } });
      expect(await store().listIdpLinksOfUser("u1")).toEqual([]);
    });
  });

  describe("removing what belongs to a user", () => {
    beforeEach(async () => {
      await commit(user("u1"), identityProvider("idp1"), token("t1", "u1"), code("c1", "u1"), link("u1", "idp1", "ext-1"));
    });

    it("token.deleteOfUser removes the user's tokens", async () => {
      await commit({ kind: "token.deleteOfUser", userId: "u1" });
      expect(await store().listTokensOfUser("u1")).toEqual([]);
    });

    it("code.deleteOfUser removes the user's pending codes", async () => {
      await commit({ kind: "code.deleteOfUser", userId: "u1" });
      expect(await store().findCode("u1", "email")).toBeUndefined();
    });

    it("userIdpLink.deleteOfUser removes the user's links to identity providers", async () => {
      await commit({ kind: "userIdpLink.deleteOfUser", userId: "u1" });
      expect(await store().listIdpLinksOfUser("u1")).toEqual([]);
    });
  });
});
