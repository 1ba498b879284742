import { Code } from "@connectrpc/connect";
import { beforeAll, describe } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { type Protocol } from "../support/clients.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";
import { itRefusesWithMetadata, type MetadataCase } from "../support/error-metadata.js";

/*
 * README "Errors": the ErrorInfo metadata names what the error is about, under the request's own field
 * names — the `userId`, `tokenId`, `configId` that was not found, the `permission` (and `scope`) a
 * denial misses, the `attemptsLeft` of a wrong code, the broken password `rules`; never a secret.
 * User, token and email RPCs.
 */
const t = useTestServer();
let w: World;
/** An IDP of organization C: not one organization A's users may be linked to. */
let foreignIdp: string;
let n = 0;

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "errmeta-users");
  ({ idpId: foreignIdp } = await t.clients
    .client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId: w.orgC })
    .createIdentityProvider({ name: "C SSO", issuer: "https://sso.c.example.com", clientId: "gatehouse", clientSecret: "c-secret-value" }));
});

const users = (protocol: Protocol, token = t.server.adminToken) => t.clients.client(UserService, protocol, { token, orgId: w.orgA });
const unknownUser = () => `no-such-user-${++n}`;
/** A machine user of organization `orgId` (A unless told), with a token; roles in A when given. */
const actor = (roles: string[] = [], orgId = w.orgA) => createActor(t.clients, t.server.adminToken, orgId, `errmeta-user-${++n}`, roles);
/** A human user of organization A with a pending email code. */
async function humanWithCode() {
  const name = `errmeta-human-${++n}`;
  const { userId } = await users("connect-json-http1").createHumanUser({
    userName: name,
    profile: { firstName: "Ada", lastName: "Lovelace" },
    email: { email: `${name}@example.com` },
  });
  const { verificationCode } = await users("connect-json-http1").resendEmailCode({ userId, returnCode: true });
  return { userId, code: verificationCode! };
}
const wrong = (code: string) => (code[0] === "A" ? "B" : "A") + code.slice(1);
const human = (extra: { password?: string; idps?: { configId: string; externalUserId: string }[] }) => {
  const name = `errmeta-new-${++n}`;
  return { userName: name, profile: { firstName: "Ada", lastName: "Lovelace" }, email: { email: `${name}@example.com` }, ...extra };
};

const cases: MetadataCase[] = [
  {
    name: "DeactivateUser: an unknown user is named by its userId",
    code: Code.NotFound,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => users(p).deactivateUser({ userId }), metadata: { userId } };
    },
  },
  {
    name: "LockUser: a user of another organization than the selected one is named by its userId",
    code: Code.NotFound,
    reason: "user.not_found",
    arrange: async (p) => {
      const { userId } = await actor([], w.orgB);
      return { call: () => users(p).lockUser({ userId }), metadata: { userId } };
    },
  },
  {
    name: "RemoveUser: an unknown user is named by its userId",
    code: Code.NotFound,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => users(p).removeUser({ userId }), metadata: { userId } };
    },
  },
  {
    name: "AddPersonalAccessToken: a user of another organization than the selected one is named by its userId",
    code: Code.NotFound,
    reason: "user.not_found",
    arrange: async (p) => {
      const { userId } = await actor([], w.orgB);
      return { call: () => users(p).addPersonalAccessToken({ userId }), metadata: { userId } };
    },
  },
  {
    name: "SetEmail: an unknown user is named by its userId",
    code: Code.NotFound,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => users(p).setEmail({ userId, email: "new@example.com" }), metadata: { userId } };
    },
  },
  {
    name: "ResendEmailCode: an unknown user is named by its userId",
    code: Code.NotFound,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => users(p).resendEmailCode({ userId }), metadata: { userId } };
    },
  },
  {
    name: "RemovePersonalAccessToken: an unknown token is named by its tokenId",
    code: Code.NotFound,
    reason: "token.not_found",
    arrange: async (p) => {
      const { userId } = await actor();
      const tokenId = `no-such-token-${++n}`;
      return { call: () => users(p).removePersonalAccessToken({ userId, tokenId }), metadata: { tokenId } };
    },
  },
  {
    name: "RemovePersonalAccessToken: a token of another user is named by its tokenId",
    code: Code.NotFound,
    reason: "token.not_found",
    arrange: async (p) => {
      const { userId } = await actor();
      const other = await actor();
      const { tokenId } = await users("connect-json-http1").addPersonalAccessToken({ userId: other.userId });
      return { call: () => users(p).removePersonalAccessToken({ userId, tokenId }), metadata: { tokenId } };
    },
  },
  {
    name: "AddPersonalAccessToken: a user manager over an ORG_OWNER misses a permission of the owner, at org level",
    code: Code.PermissionDenied,
    reason: "principal.privileged",
    arrange: async (p) => {
      const manager = await actor(["ORG_USER_MANAGER"]);
      const owner = await actor(["ORG_OWNER"]);
      // The first permission of ORG_OWNER (role table order) a user manager does not hold.
      return { call: () => users(p, manager.token).addPersonalAccessToken({ userId: owner.userId }), metadata: { permission: "org.idp.read", scope: "org" } };
    },
  },
  {
    name: "AddPersonalAccessToken: an ORG_OWNER over an IAM_OWNER_VIEWER misses the instance permission, at instance level",
    code: Code.PermissionDenied,
    reason: "principal.privileged",
    arrange: async (p) => {
      const owner = await actor(["ORG_OWNER"]);
      const viewer = await actor();
      await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).addInstanceMember({ userId: viewer.userId, roles: ["IAM_OWNER_VIEWER"] });
      return { call: () => users(p, owner.token).addPersonalAccessToken({ userId: viewer.userId }), metadata: { permission: "iam.read", scope: "instance" } };
    },
  },
  {
    name: "AddPersonalAccessToken: a user manager over a PROJECT_OWNER_VIEWER misses its project permission, at project level",
    code: Code.PermissionDenied,
    reason: "principal.privileged",
    arrange: async (p) => {
      const manager = await actor(["ORG_USER_MANAGER"]);
      const viewer = await actor();
      await t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId: w.orgA }).addProjectMember({ projectId: w.p1, userId: viewer.userId, roles: ["PROJECT_OWNER_VIEWER"] });
      return { call: () => users(p, manager.token).addPersonalAccessToken({ userId: viewer.userId }), metadata: { permission: "project.read", scope: "project" } };
    },
  },
  {
    name: "AddPersonalAccessToken: a user manager over a PROJECT_GRANT_OWNER_VIEWER misses its grant permission, at project_grant level",
    code: Code.PermissionDenied,
    reason: "principal.privileged",
    arrange: async (p) => {
      const manager = await actor(["ORG_USER_MANAGER"]);
      const viewer = await actor();
      await t.clients
        .client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId: w.orgA })
        .addProjectGrantMember({ projectId: w.p1, grantId: w.g1, userId: viewer.userId, roles: ["PROJECT_GRANT_OWNER_VIEWER"] });
      return { call: () => users(p, manager.token).addPersonalAccessToken({ userId: viewer.userId }), metadata: { permission: "project.grant.read", scope: "project_grant" } };
    },
  },
  {
    name: "VerifyEmail: an unknown user is named by its userId to an instance owner",
    code: Code.NotFound,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => users(p).verifyEmail({ userId, verificationCode: "ABC123" }), metadata: { userId } };
    },
  },
  {
    name: "VerifyEmail: a caller who is neither the user nor its user manager misses user.write",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => {
      const { userId, code } = await humanWithCode();
      return { call: () => users(p, w.actors.nobody.token).verifyEmail({ userId, verificationCode: code }), metadata: { permission: "user.write" } };
    },
  },
  {
    name: "VerifyEmail: to such a caller an unknown user misses user.write just the same",
    code: Code.PermissionDenied,
    reason: "permission.denied",
    arrange: async (p) => ({ call: () => users(p, w.actors.nobody.token).verifyEmail({ userId: unknownUser(), verificationCode: "ABC123" }), metadata: { permission: "user.write" } }),
  },
  {
    name: "VerifyEmail: a wrong code says how many attempts are left (4 of 5), and nothing more",
    code: Code.InvalidArgument,
    reason: "email_code.invalid",
    arrange: async (p) => {
      const { userId, code } = await humanWithCode();
      return { call: () => users(p).verifyEmail({ userId, verificationCode: wrong(code) }), metadata: { attemptsLeft: "4" } };
    },
  },
  {
    name: "CreateHumanUser: a password breaking the policy names every broken rule, never the password",
    code: Code.InvalidArgument,
    reason: "password.policy",
    fields: ["password", "password", "password", "password"],
    arrange: async (p) => ({ call: () => users(p).createHumanUser(human({ password: "abc" })), metadata: { rules: "min_length,uppercase,digit,symbol" } }),
  },
  {
    name: "CreateHumanUser: a link to an IDP that is not the organization's names that IDP's configId",
    code: Code.FailedPrecondition,
    reason: "idp.not_found",
    arrange: async (p) => ({
      call: () =>
        users(p).createHumanUser(
          human({ idps: [{ configId: w.idpId, externalUserId: `ext-${++n}` }, { configId: foreignIdp, externalUserId: `ext-${++n}` }] }),
        ),
      metadata: { configId: foreignIdp },
    }),
  },
  {
    name: "CreateHumanUser: a link to an unknown IDP names its configId",
    code: Code.FailedPrecondition,
    reason: "idp.not_found",
    arrange: async (p) => {
      const configId = `no-such-idp-${++n}`;
      return { call: () => users(p).createHumanUser(human({ idps: [{ configId, externalUserId: `ext-${n}` }] })), metadata: { configId } };
    },
  },
];

describe("user, token and email errors name what they are about (README Errors)", () => {
  itRefusesWithMetadata(cases);
});
