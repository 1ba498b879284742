import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { removeProjectGrant, updateProjectGrant } from "../../src/commands/project-grant-lifecycle.js";
import type { Caller } from "../../src/context.js";
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

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the grant meanwhile", async () => {
    const grantId = await newGrant();
    const deps = busyDeps(t, () => projects().removeProjectGrant({ projectId, grantId }));
    const error = await updateProjectGrant(deps, caller, { projectId, grantId, roleKeys: ["b"] }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });
});
