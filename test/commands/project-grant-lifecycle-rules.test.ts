import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { createProjectGrant } from "../../src/commands/project.js";
import { removeProjectGrant, updateProjectGrant } from "../../src/commands/project-grant-lifecycle.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { createActor } from "../support/world.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, race, racingDeps, typed } from "./rules-support.js";

/**
 * Grant changes that lose a race answer as the call after the winner would (project.proto:
 * project.grant.not_found "also when removed already"); a grant removal that finds a member added
 * since its reads is refused whole (aborted), so no membership is ever left naming a removed grant.
 */
const t = useTestServer();
let orgId: string;
let grantedOrgId: string;
let projectId: string;
let caller: Caller;
let grantCount = 0;

beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  ({ organizationId: orgId } = await orgs.createOrganization({ name: "Grant rules owner" }));
  caller = await adminCaller(t, orgId);
});

const projects = () => t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId });

/** A fresh project with roles a and b, granted with [a] to a fresh organization. */
async function newGrant(): Promise<string> {
  grantCount += 1;
  ({ projectId } = await projects().createProject({ name: `Granted ${grantCount}` }));
  for (const roleKey of ["a", "b"]) await projects().addProjectRole({ projectId, roleKey, displayName: roleKey });
  ({ organizationId: grantedOrgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: `Grantee ${grantCount}` }));
  return (await projects().createProjectGrant({ projectId, grantedOrganizationId: grantedOrgId, roleKeys: ["a"] })).grantId;
}

describe("grant changes that lose a race", () => {
  it("an update that loses to the grant's removal is project.grant.not_found naming the grant, and appends nothing", async () => {
    const grantId = await newGrant();
    const deps = interleavedDeps(t, () => projects().removeProjectGrant({ projectId, grantId }));
    const error = await updateProjectGrant(deps, caller, { projectId, grantId, roleKeys: ["a", "b"] }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "not_found", reason: "project.grant.not_found", metadata: { projectId, grantId } });
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added", "project.grant.removed"]);
  });

  it("of two concurrent removals one wins; the other is project.grant.not_found (removed already)", async () => {
    const grantId = await newGrant();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeProjectGrant(deps, caller, { projectId, grantId })));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "project.grant.not_found", metadata: { projectId, grantId } }]);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added", "project.grant.removed"]);
  });

  it("a removal that finds a member added since its reads is aborted whole: the grant and its member stay", async () => {
    const grantId = await newGrant();
    const member = await createActor(t.clients, t.server.adminToken, grantedOrgId, `grant-member-${grantCount}`);
    const deps = interleavedDeps(t, () => projects().addProjectGrantMember({ projectId, grantId, userId: member.userId, roles: ["PROJECT_GRANT_OWNER"] }));
    const error = await removeProjectGrant(deps, caller, { projectId, grantId }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    expect((await projects().getProjectGrant({ projectId, grantId })).grant?.roleKeys).toEqual(["a"]);
    const { members } = await projects().listProjectGrantMembers({ projectId, grantId });
    expect(members.map((m) => m.userId)).toEqual([member.userId]);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added"]);
  });
});

describe("a grant never holds a role key its project no longer defines (project.proto: role keys must be the project's)", () => {
  it("an update that loses to RemoveProjectRole of a key it adds is aborted whole: the grant keeps its keys", async () => {
    const grantId = await newGrant();
    const deps = interleavedDeps(t, () => projects().removeProjectRole({ projectId, roleKey: "b" }));
    const error = await updateProjectGrant(deps, caller, { projectId, grantId, roleKeys: ["a", "b"] }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    expect((await projects().getProjectGrant({ projectId, grantId })).grant?.roleKeys).toEqual(["a"]);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added"]);
  });

  it("a new grant that loses to RemoveProjectRole of one of its keys is aborted whole: no grant is made", async () => {
    await newGrant();
    const deps = interleavedDeps(t, () => projects().removeProjectRole({ projectId, roleKey: "b" }));
    const error = await createProjectGrant(deps, caller, { projectId, grantedOrganizationId: grantedOrgId, roleKeys: ["a", "b"] }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    const { grants } = await projects().listProjectGrants({ projectId });
    expect(grants.map((grant) => grant.roleKeys)).toEqual([["a"]]);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the grant meanwhile", async () => {
    const grantId = await newGrant();
    const deps = busyDeps(t, () => projects().removeProjectGrant({ projectId, grantId }));
    const error = await updateProjectGrant(deps, caller, { projectId, grantId, roleKeys: ["b"] }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });
});

/** A fresh project with roles a, b and c, granted with `roleKeys` to a fresh organization. */
async function grantOf(roleKeys: string[]): Promise<string> {
  grantCount += 1;
  ({ projectId } = await projects().createProject({ name: `Granted ${grantCount}` }));
  for (const roleKey of ["a", "b", "c"]) await projects().addProjectRole({ projectId, roleKey, displayName: roleKey });
  ({ organizationId: grantedOrgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: `Grantee ${grantCount}` }));
  return (await projects().createProjectGrant({ projectId, grantedOrganizationId: grantedOrgId, roleKeys })).grantId;
}
const roleKeysOf = async (grantId: string) => (await projects().getProjectGrant({ projectId, grantId })).grant?.roleKeys;

describe("UpdateProjectGrant: the same set of keys again is no change (project.proto)", () => {
  it.each([
    ["in another order", ["b", "a"]],
    ["with a key given twice", ["a", "b", "a"]],
  ])("the grant's keys %s: no event, and the details of the grant's last change", async (_name, roleKeys) => {
    const grantId = await grantOf(["a", "b"]);
    const created = await projects().getProjectGrant({ projectId, grantId });
    const { details } = await projects().updateProjectGrant({ projectId, grantId, roleKeys });
    expect(details?.sequence).toBe(created.grant?.details?.sequence);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added"]);
    expect(await roleKeysOf(grantId)).toEqual(["a", "b"]);
  });

  it.each([
    ["fewer keys (a subset)", ["a"], ["a"]],
    ["more keys (a superset)", ["a", "b", "c"], ["a", "b", "c"]],
    ["as many keys, but another set", ["a", "c"], ["a", "c"]],
    ["no keys at all", [], []],
  ])("%s is a change: one project.grant.changed, and the grant holds exactly the new keys", async (_name, roleKeys, stored) => {
    const grantId = await grantOf(["a", "b"]);
    const created = await projects().getProjectGrant({ projectId, grantId });
    const { details } = await projects().updateProjectGrant({ projectId, grantId, roleKeys });
    expect(details!.sequence > created.grant!.details!.sequence).toBe(true);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added", "project.grant.changed"]);
    expect(await roleKeysOf(grantId)).toEqual(stored);
  });
});

describe("UpdateProjectGrant with keys the project does not define", () => {
  it("is invalid_argument project.role.not_found with one violation role_keys[i] per unknown key, each with that rule; the grant keeps its keys", async () => {
    const grantId = await grantOf(["a"]);
    const error = await failure(projects().updateProjectGrant({ projectId, grantId, roleKeys: ["x", "a", "y"] }));
    expect(error).toMatchObject({
      code: Code.InvalidArgument,
      reason: "project.role.not_found",
      fields: ["role_keys[0]", "role_keys[2]"],
      rules: ["project.role.not_found", "project.role.not_found"],
    });
    expect(await roleKeysOf(grantId)).toEqual(["a"]);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added"]);
  });
});
