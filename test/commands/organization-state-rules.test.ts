import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService, OrganizationState } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { addInstanceMember } from "../../src/commands/instance.js";
import { changeOrganizationState } from "../../src/commands/organization-state.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { ownerCaller } from "../support/slow-store.js";
import { adminCaller, busyDeps, eventTypesOf, race, racingDeps, typed } from "./rules-support.js";

/**
 * DeactivateOrganization / ReactivateOrganization: "of two concurrent identical calls one wins and the
 * other gets the failed_precondition a later call would" (organization-state.ts, organization.proto).
 */
const t = useTestServer();
let caller: Caller;
let orgCount = 0;

beforeAll(async () => {
  caller = await adminCaller(t);
});

const orgs = () => t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });

async function newOrg(): Promise<string> {
  orgCount += 1;
  return (await orgs().createOrganization({ name: `State rules ${orgCount}` })).organizationId;
}
const stateOf = async (organizationId: string) => (await orgs().getOrganization({ organizationId })).organization?.state;

describe("organization state changes that lose a race", () => {
  it("of two concurrent deactivations one wins; the other is organization.already_inactive, and one event is appended", async () => {
    const organizationId = await newOrg();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => changeOrganizationState(deps, caller, organizationId, "deactivate")));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "failed_precondition", reason: "organization.already_inactive", metadata: {} }]);
    expect(await stateOf(organizationId)).toBe(OrganizationState.INACTIVE);
    expect(await eventTypesOf(t, "org", organizationId)).toEqual(["org.added", "org.deactivated"]);
  });

  it("of two concurrent reactivations one wins; the other is organization.not_inactive, and one event is appended", async () => {
    const organizationId = await newOrg();
    await orgs().deactivateOrganization({ organizationId });
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => changeOrganizationState(deps, caller, organizationId, "reactivate")));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "failed_precondition", reason: "organization.not_inactive", metadata: {} }]);
    expect(await stateOf(organizationId)).toBe(OrganizationState.ACTIVE);
    expect(await eventTypesOf(t, "org", organizationId)).toEqual(["org.added", "org.deactivated", "org.reactivated"]);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer made the same change meanwhile", async () => {
    const organizationId = await newOrg();
    const deps = busyDeps(t, () => orgs().deactivateOrganization({ organizationId }));
    const error = await changeOrganizationState(deps, caller, organizationId, "deactivate").catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
    expect(await eventTypesOf(t, "org", organizationId)).toEqual(["org.added", "org.deactivated"]);
  });
});

describe("the protected organizations (organization.proto)", () => {
  const defaultOrgId = async () => (await t.clients.client(InstanceService, "connect-json-http1", { token: t.server.adminToken }).getInstance({})).defaultOrganizationId;

  it("the default organization cannot be deactivated: organization.default, and it stays active", async () => {
    const organizationId = await defaultOrgId();
    const before = await eventTypesOf(t, "org", organizationId);
    expect(await failure(orgs().deactivateOrganization({ organizationId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.default" });
    expect(await stateOf(organizationId)).toBe(OrganizationState.ACTIVE);
    expect(await eventTypesOf(t, "org", organizationId)).toEqual(before);
  });

  it("reactivating an active organization is organization.not_inactive, for the default organization too (it is not a deactivation)", async () => {
    const organizationId = await defaultOrgId();
    expect(await failure(orgs().reactivateOrganization({ organizationId }))).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.not_inactive" });
    expect(await failure(orgs().reactivateOrganization({ organizationId: await newOrg() }))).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.not_inactive" });
  });
});

describe("an administrator of another instance", () => {
  // IAM_OWNER of its own instance: its rights end there; this instance's objects do not exist for it.
  const foreignOwner = (): Caller => ownerCaller("foreign-admin", "foreign-org", "foreign-instance");

  it("finds no organization of this instance to deactivate: organization.not_found, and the organization stays active", async () => {
    const organizationId = await newOrg();
    const error = await changeOrganizationState(t.server.gatehouse.deps, foreignOwner(), organizationId, "deactivate").catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "not_found", reason: "organization.not_found", metadata: { organizationId } });
    expect(await stateOf(organizationId)).toBe(OrganizationState.ACTIVE);
    expect(await eventTypesOf(t, "org", organizationId)).toEqual(["org.added"]);
  });

  it("cannot make a user of this instance a member of its own: user.not_found", async () => {
    const organizationId = await newOrg();
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: organizationId });
    const { userId } = await users.createMachineUser({ userName: `foreign-target-${organizationId}`, name: "Target" });
    const error = await addInstanceMember(t.server.gatehouse.deps, foreignOwner(), { userId, roles: ["IAM_OWNER_VIEWER"] }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "failed_precondition", reason: "user.not_found", metadata: { userId } });
    expect(await eventTypesOf(t, "user", userId)).toEqual(["user.machine.added"]);
  });
});
