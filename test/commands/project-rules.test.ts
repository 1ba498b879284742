import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

/**
 * CreateProjectGrant's refusals (project.proto): a project is never granted to its own organization
 * (invalid_argument with a field violation on granted_organization_id), and only with role keys the
 * project defines (failed_precondition project.role.not_found naming every unknown key).
 */
const t = useTestServer();
let orgId: string;
let grantedOrgId: string;
let projectCount = 0;

beforeAll(async () => {
  const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
  ({ organizationId: orgId } = await orgs.createOrganization({ name: "Grant refusals owner" }));
  ({ organizationId: grantedOrgId } = await orgs.createOrganization({ name: "Grant refusals grantee" }));
});

const projects = () => t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId });

/** A fresh project with the role "reader". */
async function newProject(): Promise<string> {
  projectCount += 1;
  const { projectId } = await projects().createProject({ name: `Grant refusals ${projectCount}` });
  await projects().addProjectRole({ projectId, roleKey: "reader", displayName: "Reader" });
  return projectId;
}
const grantsOf = async (projectId: string) => (await projects().listProjectGrants({ projectId })).grants;

describe("CreateProjectGrant", () => {
  it("to the project's own organization is invalid_argument project.grant.own_organization, one violation on granted_organization_id with that rule", async () => {
    const projectId = await newProject();
    const error = await failure(projects().createProjectGrant({ projectId, grantedOrganizationId: orgId, roleKeys: ["reader"] }));
    expect(error).toMatchObject({
      code: Code.InvalidArgument,
      reason: "project.grant.own_organization",
      fields: ["granted_organization_id"],
      rules: ["project.grant.own_organization"],
    });
    expect(await grantsOf(projectId)).toEqual([]);
  });

  it("with keys the project does not define is failed_precondition project.role.not_found naming each unknown key, and grants nothing", async () => {
    const projectId = await newProject();
    const error = await failure(projects().createProjectGrant({ projectId, grantedOrganizationId: grantedOrgId, roleKeys: ["writer", "reader", "admin"] }));
    expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "project.role.not_found", metadata: { roleKeys: "writer,admin" } });
    // The message names each unknown key on its own, and not the defined one.
    const words = error.message.split(/[\s,;:]+/);
    expect(words).toEqual(expect.arrayContaining(["writer", "admin"]));
    expect(words).not.toContain("reader");
    expect(await grantsOf(projectId)).toEqual([]);
  });

  // An organization of another instance sharing the database cannot exist any more: a database holds one instance
  // (instances_single, both engines; test/postgres/bootstrap-replicas.test.ts).
});
