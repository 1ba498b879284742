import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { removeProjectRole } from "../../src/commands/project-role.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, race, racingDeps, typed } from "./rules-support.js";

/**
 * RemoveProjectRole takes the role out of every grant in the same commit. Losing a race to another
 * removal of the role is project.role.not_found ("also when removed already", project.proto); losing it
 * to some other change (a grant removed meanwhile) is aborted, and nothing of the removal is written.
 */
const t = useTestServer();
let orgId: string;
let grantedOrgId: string;
let caller: Caller;
let projectCount = 0;

beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  ({ organizationId: orgId } = await orgs.createOrganization({ name: "Role rules owner" }));
  ({ organizationId: grantedOrgId } = await orgs.createOrganization({ name: "Role rules grantee" }));
  caller = await adminCaller(t, orgId);
});

const projects = () => t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId });

/** A fresh project with roles "keep" and "gone", granted with both. */
async function newProject(): Promise<{ projectId: string; grantId: string }> {
  projectCount += 1;
  const { projectId } = await projects().createProject({ name: `Roles ${projectCount}` });
  for (const roleKey of ["keep", "gone"]) await projects().addProjectRole({ projectId, roleKey, displayName: roleKey });
  const { grantId } = await projects().createProjectGrant({ projectId, grantedOrganizationId: grantedOrgId, roleKeys: ["keep", "gone"] });
  return { projectId, grantId };
}
const roleKeysOf = async (projectId: string) => ((await projects().getProject({ projectId })).project?.roles ?? []).map((role) => role.roleKey).sort();

describe("role removals that lose a race", () => {
  it("of two concurrent removals one wins; the other is project.role.not_found naming the role", async () => {
    const { projectId, grantId } = await newProject();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeProjectRole(deps, caller, { projectId, roleKey: "gone" })));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "project.role.not_found", metadata: { roleKey: "gone" } }]);
    expect(await roleKeysOf(projectId)).toEqual(["keep"]);
    expect((await projects().getProjectGrant({ projectId, grantId })).grant?.roleKeys).toEqual(["keep"]);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added", "project.grant.changed"]);
  });

  it("a removal that finds a grant removed since its reads is aborted, and the role stays", async () => {
    const { projectId, grantId } = await newProject();
    const deps = interleavedDeps(t, () => projects().removeProjectGrant({ projectId, grantId }));
    const error = await removeProjectRole(deps, caller, { projectId, roleKey: "gone" }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    expect(await roleKeysOf(projectId)).toEqual(["gone", "keep"]);
    expect((await eventTypesOf(t, "project", projectId)).filter((type) => type === "project.role.removed")).toEqual([]);
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the role meanwhile", async () => {
    const { projectId } = await newProject();
    const deps = busyDeps(t, () => projects().removeProjectRole({ projectId, roleKey: "gone" }));
    const error = await removeProjectRole(deps, caller, { projectId, roleKey: "gone" }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });
});

describe("RemoveProjectRole", () => {
  it("removes a project's only role, and takes it out of the grant that holds it", async () => {
    projectCount += 1;
    const { projectId } = await projects().createProject({ name: `Roles ${projectCount}` });
    await projects().addProjectRole({ projectId, roleKey: "only", displayName: "Only" });
    const { grantId } = await projects().createProjectGrant({ projectId, grantedOrganizationId: grantedOrgId, roleKeys: ["only"] });
    await projects().removeProjectRole({ projectId, roleKey: "only" });
    expect(await roleKeysOf(projectId)).toEqual([]);
    expect((await projects().getProjectGrant({ projectId, grantId })).grant?.roleKeys).toEqual([]);
  });

  it("of a key the project does not define is not_found project.role.not_found naming it; roles and grants stay as they were", async () => {
    const { projectId, grantId } = await newProject();
    const error = await failure(projects().removeProjectRole({ projectId, roleKey: "never-defined" }));
    expect(error).toMatchObject({ code: Code.NotFound, reason: "project.role.not_found", metadata: { roleKey: "never-defined" } });
    expect(await roleKeysOf(projectId)).toEqual(["gone", "keep"]);
    expect((await projects().getProjectGrant({ projectId, grantId })).grant?.roleKeys).toEqual(["keep", "gone"]);
    expect(await eventTypesOf(t, "project.grant", grantId)).toEqual(["project.grant.added"]);
  });
});
