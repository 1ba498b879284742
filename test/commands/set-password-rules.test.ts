import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { setPassword } from "../../src/commands/set-password.js";
import type { Caller } from "../../src/context.js";
import type { DomainError } from "../../src/domain/errors.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, interleavedDeps, typed } from "./rules-support.js";

/** SetPassword's commit against what changed since its reads (src/commands/set-password.ts), in-process. */
const t = useTestServer();
let orgId: string;
let caller: Caller;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Set password rules" }));
  caller = await adminCaller(t, orgId);
});

const admin = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
const refusal = async (promise: Promise<unknown>) => typed((await promise.then(() => undefined, (e: unknown) => e)) as DomainError);
let n = 0;
const newUser = async () =>
  (await admin().createHumanUser({ userName: `set-rules-${++n}`, profile: { firstName: "Set", lastName: "Rules" }, email: { email: `set-rules-${n}@example.com`, isEmailVerified: true } })).userId;

describe("SetPassword racing other writes", () => {
  it("a user removed after it was read is user.not_found, as a later call would be told", async () => {
    const userId = await newUser();
    const deps = interleavedDeps(t, () => admin().removeUser({ userId }));
    expect(await refusal(setPassword(deps, caller, { userId, password: "Racing-Pass-1", changeRequired: false }))).toEqual({ kind: "not_found", reason: "user.not_found", metadata: { userId } });
  });

  it("a user removed after it was read, by a call that expected the sequence it read, is aborted concurrent_modification: the expectation is checked first", async () => {
    const userId = await newUser();
    const sequence = (await admin().getUser({ userId })).user?.details?.sequence;
    const deps = interleavedDeps(t, () => admin().removeUser({ userId }));
    expect(await refusal(setPassword(deps, caller, { userId, password: "Racing-Pass-1", changeRequired: false, expectedSequence: sequence }))).toMatchObject({
      kind: "aborted",
      reason: "concurrent_modification",
    });
  });

  it("a role granted to the user after the privilege ceiling was checked fails the commit (aborted), and nothing is set", async () => {
    const userId = await newUser();
    const { user: before } = await admin().getUser({ userId });
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken, orgId });
    const deps = interleavedDeps(t, () => orgs.addOrganizationMember({ userId, roles: ["ORG_OWNER"] }));
    const manager: Caller = { ...caller, principal: { ...caller.principal, userId: "a-user-manager", memberships: [{ level: "org", scopeId: orgId, ownerOrgId: orgId, roles: ["ORG_USER_MANAGER"] }] } };
    expect(await refusal(setPassword(deps, manager, { userId, password: "Racing-Pass-1", changeRequired: false }))).toMatchObject({ kind: "aborted", reason: "store.condition_failed" });
    expect((await admin().getUser({ userId })).user?.type.value).toMatchObject({ hasPassword: false });
    expect(before?.type.value).toMatchObject({ hasPassword: false });
  });
});
