import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

const t = useTestServer();
let otherOrgId: string;
/** A machine user of the default organization with a token and no role at all. */
let noRoleToken: string;
/** A machine user of the default organization that is only ORG_USER_MANAGER there. */
let userManagerToken: string;
/** Expires one hour after the test clock's start. */
let expiringToken: string;
let managerId: string;
let noRoleId: string;

beforeAll(async () => {
  const admin = { token: t.server.adminToken };
  const users = t.clients.client(UserService, "connect-json-http1", admin);
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", admin);
  ({ organizationId: otherOrgId } = await orgs.createOrganization({ name: "Other" }));

  ({ userId: noRoleId } = await users.createMachineUser({ userName: "no-role", name: "No role" }));
  ({ token: noRoleToken } = await users.addPersonalAccessToken({ userId: noRoleId }));
  ({ userId: managerId } = await users.createMachineUser({ userName: "manager", name: "Manager" }));
  await orgs.addOrganizationMember({ userId: managerId, roles: ["ORG_USER_MANAGER"] });
  ({ token: userManagerToken } = await users.addPersonalAccessToken({ userId: managerId }));
  const expiresAt = new Date(t.server.clock.now().getTime() + 3_600_000);
  ({ token: expiringToken } = await users.addPersonalAccessToken({ userId: managerId, expirationDate: timestampFromDate(expiresAt) }));
});

describe.each(PROTOCOLS)("authentication over %s", (protocol) => {
  const getInstance = (options: { token?: string; authorization?: string }) =>
    t.clients.client(InstanceService, protocol, options).getInstance({});

  it.each([
    ["no Authorization header", {}, "auth.missing"],
    ["a Basic header", { authorization: "Basic YWRtaW46YWRtaW4=" }, "auth.malformed"],
    ["Bearer without a token", { authorization: "Bearer " }, "auth.malformed"],
    ["an unknown token of the right shape", { token: "gh1.unknown.c2VjcmV0" }, "auth.token_invalid"],
    ["garbage", { token: "not-a-token" }, "auth.token_invalid"],
  ])("rejects %s with unauthenticated", async (_name, options, reason) => {
    const error = await failure(getInstance(options));
    expect(error).toMatchObject({ code: Code.Unauthenticated, reason, domain: "gatehouse" });
  });

  it("rejects a known token id with the wrong secret", async () => {
    const [prefix, id] = t.server.adminToken.split(".");
    const error = await failure(getInstance({ token: `${prefix}.${id}.AAAAwrongsecretAAAA` }));
    expect(error).toMatchObject({ code: Code.Unauthenticated, reason: "auth.token_invalid" });
  });
});

describe("token expiry (injected clock)", () => {
  it("accepts the token until it expires, then answers unauthenticated", async () => {
    const users = t.clients.client(UserService, "grpc-h2c", { token: expiringToken });
    t.server.clock.advance(3_600_000 - 1);
    expect((await users.getUser({ userId: managerId })).user?.userId).toBe(managerId);
    t.server.clock.advance(1);
    const error = await failure(users.getUser({ userId: managerId }));
    expect(error).toMatchObject({ code: Code.Unauthenticated, reason: "auth.token_expired" });
    t.server.clock.advance(-3_600_000);
    expect((await t.clients.client(UserService, "grpc-h2c", { token: userManagerToken }).getUser({ userId: managerId })).user).toBeDefined();
  });

  it("rejects an expiration date that is not in the future", async () => {
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
    const { userId } = await users.createMachineUser({ userName: "expiry-check", name: "x" });
    const error = await failure(users.addPersonalAccessToken({ userId, expirationDate: timestampFromDate(t.server.clock.now()) }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "token.expiration_past", fields: ["expiration_date"] });
  });
});

describe.each(PROTOCOLS)("authorization over %s", (protocol) => {
  it("denies x-service-orgid naming an organization the caller has no role in", async () => {
    const users = t.clients.client(UserService, protocol, { token: userManagerToken, orgId: otherOrgId });
    const error = await failure(users.createMachineUser({ userName: `x-${protocol}`, name: "x" }));
    expect(error).toMatchObject({ code: Code.PermissionDenied, reason: "organization.access_denied" });
  });

  it("denies x-service-orgid naming an organization that does not exist, also for IAM_OWNER", async () => {
    const users = t.clients.client(UserService, protocol, { token: t.server.adminToken, orgId: "does-not-exist" });
    const error = await failure(users.createMachineUser({ userName: `y-${protocol}`, name: "y" }));
    expect(error).toMatchObject({ code: Code.PermissionDenied, reason: "organization.access_denied" });
  });

  it("lets IAM_OWNER act in any existing organization through x-service-orgid", async () => {
    const users = t.clients.client(UserService, protocol, { token: t.server.adminToken, orgId: otherOrgId });
    const { details } = await users.createMachineUser({ userName: `iam-${protocol}`, name: "z" });
    expect(details?.resourceOwner).toBe(otherOrgId);
  });

  it("denies a member without the permission", async () => {
    // ORG_USER_MANAGER may write users but not members or instance data.
    const orgs = t.clients.client(OrganizationService, protocol, { token: userManagerToken });
    const error = await failure(orgs.addOrganizationMember({ userId: "anyone", roles: ["ORG_OWNER"] }));
    expect(error).toMatchObject({ code: Code.PermissionDenied, reason: "permission.denied", metadata: { permission: "org.member.write" } });
    const instance = t.clients.client(InstanceService, protocol, { token: userManagerToken });
    expect((await failure(instance.getInstance({}))).code).toBe(Code.PermissionDenied);
  });

  it("denies a user with no role everything but reading themself", async () => {
    const users = t.clients.client(UserService, protocol, { token: noRoleToken });
    expect((await failure(users.createMachineUser({ userName: `n-${protocol}`, name: "n" }))).code).toBe(Code.PermissionDenied);
    const orgs = t.clients.client(OrganizationService, protocol, { token: noRoleToken });
    expect((await failure(orgs.createOrganization({ name: `n-${protocol}` }))).code).toBe(Code.PermissionDenied);
    expect((await failure(users.getUser({ userId: managerId }))).code).toBe(Code.PermissionDenied);
    expect((await users.getUser({ userId: noRoleId })).user?.userName).toBe("no-role");
  });

  it("allows what the role grants", async () => {
    const users = t.clients.client(UserService, protocol, { token: userManagerToken });
    const { userId } = await users.createMachineUser({ userName: `m-${protocol}`, name: "m" });
    expect(userId).not.toBe("");
  });
});
