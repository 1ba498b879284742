import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService, ProjectState } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { changeProjectState, removeProject, updateProject } from "../../src/commands/project-lifecycle.js";
import type { Caller } from "../../src/context.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { adminCaller, busyDeps, eventTypesOf, interleavedDeps, race, racingDeps, typed } from "./rules-support.js";

/**
 * Project changes that lose a race answer as the call after the winner would (project.proto:
 * not_found "also when removed already", already_inactive); a removal that finds something added to
 * the project since its reads is refused whole (aborted), leaving the project and what was added.
 */
const t = useTestServer();
let orgId: string;
let caller: Caller;
let projectCount = 0;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Project rules" }));
  caller = await adminCaller(t, orgId);
});

const projects = () => t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId });

async function newProject(): Promise<string> {
  projectCount += 1;
  return (await projects().createProject({ name: `Project ${projectCount}` })).projectId;
}

describe("project changes that lose a race", () => {
  it("of two concurrent deactivations one wins; the other is project.already_inactive, and one event is appended", async () => {
    const projectId = await newProject();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => changeProjectState(deps, caller, projectId, "deactivate")));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "failed_precondition", reason: "project.already_inactive", metadata: {} }]);
    expect((await projects().getProject({ projectId })).project?.state).toBe(ProjectState.INACTIVE);
    expect(await eventTypesOf(t, "project", projectId)).toEqual(["project.added", "project.deactivated"]);
  });

  it("a rename that loses to a removal is project.not_found naming the project, and appends nothing", async () => {
    const projectId = await newProject();
    const deps = interleavedDeps(t, () => projects().removeProject({ projectId }));
    const error = await updateProject(deps, caller, { projectId, name: "Renamed too late" }).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "not_found", reason: "project.not_found", metadata: { projectId } });
    expect(await eventTypesOf(t, "project", projectId)).toEqual(["project.added", "project.removed"]);
  });

  it("of two concurrent removals one wins; the other is project.not_found (removed already)", async () => {
    const projectId = await newProject();
    const deps = racingDeps(t);
    const { succeeded, refusals } = await race([1, 2].map(() => removeProject(deps, caller, projectId)));
    expect(succeeded).toBe(1);
    expect(refusals.map(typed)).toEqual([{ kind: "not_found", reason: "project.not_found", metadata: { projectId } }]);
    expect(await eventTypesOf(t, "project", projectId)).toEqual(["project.added", "project.removed"]);
  });

  it("a removal that finds a role added since its reads is aborted whole: the project and the role stay, nothing is appended", async () => {
    const projectId = await newProject();
    const deps = interleavedDeps(t, () => projects().addProjectRole({ projectId, roleKey: "late", displayName: "Late" }));
    const error = await removeProject(deps, caller, projectId).catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "aborted", reason: "store.condition_failed", metadata: {} });
    const { project } = await projects().getProject({ projectId });
    expect(project?.state).toBe(ProjectState.ACTIVE);
    expect(project?.roles.map((role) => role.roleKey)).toEqual(["late"]);
    expect(await eventTypesOf(t, "project", projectId)).toEqual(["project.added", "project.role.added"]);
    // Retried, it sees the role and takes it along.
    await projects().removeProject({ projectId });
    expect((await failure(projects().getProject({ projectId }))).reason).toBe("project.not_found");
  });
});

describe("a store failure that is not a lost race", () => {
  it("reaches the caller as store.busy (retry), even when another writer removed the project meanwhile", async () => {
    const projectId = await newProject();
    const deps = busyDeps(t, () => projects().removeProject({ projectId }));
    const error = await changeProjectState(deps, caller, projectId, "deactivate").catch((e: unknown) => e);
    expect(typed(error as never)).toEqual({ kind: "unavailable", reason: "store.busy", metadata: {} });
  });
});
