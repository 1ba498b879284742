import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, type World } from "../support/world.js";

/**
 * The answers of the shared selection steps (src/access/select-*.ts, require-instance-permission.ts): each refusal
 * or miss is typed (code, reason) and names what it is about in ErrorInfo metadata, so a client can tell which of
 * the ids it sent was wrong without parsing the message (API.md "Errors"). This file deactivates organizations and
 * projects: it builds its own world and shares it with no other file.
 */
const t = useTestServer();
let w: World;
const UNKNOWN = "000000000000000000";

const projects = (token = t.server.adminToken, orgId = w.orgA) => t.clients.client(ProjectService, "connect-json-http1", { token, orgId });
const users = (token = t.server.adminToken, orgId = w.orgA) => t.clients.client(UserService, "connect-json-http1", { token, orgId });

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "selection");
});

describe("selecting the organization", () => {
  it("answers an x-service-orgid that does not exist with organization.access_denied naming the requested id", async () => {
    const error = await failure(users(t.server.adminToken, UNKNOWN).getUser({ userId: w.actors.nobody.userId }));
    expect(error).toMatchObject({ code: Code.PermissionDenied, reason: "organization.access_denied", metadata: { organizationId: UNKNOWN } });
  });

  it("refuses a foreign member's call into a deactivated organization with organization.inactive naming it", async () => {
    const orgs = t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken });
    const { organizationId } = await orgs.createOrganization({ name: "selection inactive" });
    const { projectId } = await projects(t.server.adminToken, organizationId).createProject({ name: "Shared" });
    // A user of organization B holds a project role in the organization that is then deactivated.
    await projects(t.server.adminToken, organizationId).addProjectMember({ projectId, userId: w.actors.projectOwnerP1.userId, roles: ["PROJECT_OWNER"] });
    expect((await projects(w.actors.projectOwnerP1.token, organizationId).getProject({ projectId })).project?.projectId).toBe(projectId);

    await orgs.deactivateOrganization({ organizationId });
    const error = await failure(projects(w.actors.projectOwnerP1.token, organizationId).getProject({ projectId }));
    expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "organization.inactive", metadata: { organizationId } });
    // An instance role still reaches into it (to read it and reactivate it).
    expect((await projects(t.server.adminToken, organizationId).getProject({ projectId })).project?.projectId).toBe(projectId);
  });
});

describe("selecting a user to manage", () => {
  it("answers an unknown user, and a user of another organization, with user.not_found naming the id", async () => {
    for (const userId of [UNKNOWN, w.actors.grantOwnerG1.userId]) {
      const error = await failure(users(w.actors.orgOwnerA.token).deactivateUser({ userId }));
      expect(error).toMatchObject({ code: Code.NotFound, reason: "user.not_found", metadata: { userId } });
    }
  });
});

describe("selecting a project and a grant", () => {
  it("answers an unknown project, and another organization's project, with project.not_found naming the id", async () => {
    const { projectId: foreign } = await projects(t.server.adminToken, w.orgB).createProject({ name: "Selection B" });
    for (const projectId of [UNKNOWN, foreign]) {
      const error = await failure(projects(w.actors.orgOwnerA.token).getProject({ projectId }));
      expect(error).toMatchObject({ code: Code.NotFound, reason: "project.not_found", metadata: { projectId } });
    }
  });

  it("answers an unknown grant, and another project's grant, with project.grant.not_found naming both ids", async () => {
    const { grantId: otherProjectsGrant } = await projects().createProjectGrant({ projectId: w.p2, grantedOrganizationId: w.orgB, roleKeys: [] });
    for (const grantId of [UNKNOWN, otherProjectsGrant]) {
      const error = await failure(projects(w.actors.orgOwnerA.token).getProjectGrant({ projectId: w.p1, grantId }));
      expect(error).toMatchObject({ code: Code.NotFound, reason: "project.grant.not_found", metadata: { projectId: w.p1, grantId } });
    }
  });

  it("refuses a write under an inactive project with project.inactive naming it, and still serves reads", async () => {
    const { projectId } = await projects().createProject({ name: "Selection paused" });
    await projects().deactivateProject({ projectId });
    const error = await failure(projects().addProjectRole({ projectId, roleKey: "late", displayName: "Late" }));
    expect(error).toMatchObject({ code: Code.FailedPrecondition, reason: "project.inactive", metadata: { projectId } });
    expect((await projects().getProject({ projectId })).project?.projectId).toBe(projectId);
  });
});

describe("instance-wide permissions", () => {
  it("refuses an organization owner the instance's SMTP configuration with permission.denied naming iam.write", async () => {
    const smtp = t.clients.client(SmtpService, "connect-json-http1", { token: w.actors.orgOwnerA.token });
    const error = await failure(smtp.removeSmtpConfig({}));
    expect(error).toMatchObject({ code: Code.PermissionDenied, reason: "permission.denied", metadata: { permission: "iam.write" } });
    expect(error.message).toContain("iam.write");
  });
});
