import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService, OrganizationState } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { changeOrganizationState } from "../../src/commands/organization-state.js";
import type { Caller } from "../../src/context.js";
import { useTestServer } from "../support/server.js";
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
