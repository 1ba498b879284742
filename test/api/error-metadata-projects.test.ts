import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, type World } from "../support/world.js";
import { itRefusesWithMetadata, type MetadataCase } from "../support/error-metadata.js";

/*
 * README "Errors": the ErrorInfo metadata names what the error is about, under the request's own field
 * names — the `projectId`, `grantId`, `appId`, `roleKey` / `roleKeys` that was not found or no longer
 * fits. Project, grant, role and application RPCs.
 */
const t = useTestServer();
let w: World;
let n = 0;

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "errmeta-projects");
});

const admin = (orgId: string) => ({ token: t.server.adminToken, orgId });
const projects = (protocol: Protocol, orgId = w.orgA) => t.clients.client(ProjectService, protocol, admin(orgId));
const apps = (protocol: Protocol, orgId = w.orgA) => t.clients.client(ApplicationService, protocol, admin(orgId));
/** A new project of organization A with one role, `reader`; each case its own, so cases share no state. */
const freshProject = async () => {
  const { projectId } = await projects("connect-json-http1").createProject({ name: `errmeta project ${++n}` });
  await projects("connect-json-http1").addProjectRole({ projectId, roleKey: "reader", displayName: "Reader" });
  return projectId;
};
const inactiveProject = async () => {
  const projectId = await freshProject();
  await projects("connect-json-http1").deactivateProject({ projectId });
  return projectId;
};
const unknown = (what: string) => `no-such-${what}-${++n}`;

const cases: MetadataCase[] = [
  {
    name: "UpdateProject: an unknown project is named by its projectId",
    code: Code.NotFound,
    reason: "project.not_found",
    arrange: async (p) => {
      const projectId = unknown("project");
      return { call: () => projects(p).updateProject({ projectId, name: "Renamed" }), metadata: { projectId } };
    },
  },
  {
    name: "AddProjectRole: a project of another organization than the selected one is named by its projectId",
    code: Code.NotFound,
    reason: "project.not_found",
    arrange: async (p) => ({
      call: () => projects(p, w.orgB).addProjectRole({ projectId: w.p1, roleKey: "writer", displayName: "Writer" }),
      metadata: { projectId: w.p1 },
    }),
  },
  {
    name: "UpdateProject: an inactive project is named by its projectId",
    code: Code.FailedPrecondition,
    reason: "project.inactive",
    arrange: async (p) => {
      const projectId = await inactiveProject();
      return { call: () => projects(p).updateProject({ projectId, name: `still inactive ${n}` }), metadata: { projectId } };
    },
  },
  {
    name: "AddProjectRole: an inactive project is named by its projectId",
    code: Code.FailedPrecondition,
    reason: "project.inactive",
    arrange: async (p) => {
      const projectId = await inactiveProject();
      return { call: () => projects(p).addProjectRole({ projectId, roleKey: "writer", displayName: "Writer" }), metadata: { projectId } };
    },
  },
  {
    name: "RemoveProjectRole: a role key the project does not define is named by its roleKey",
    code: Code.NotFound,
    reason: "project.role.not_found",
    arrange: async (p) => {
      const projectId = await freshProject();
      return { call: () => projects(p).removeProjectRole({ projectId, roleKey: "ghost" }), metadata: { roleKey: "ghost" } };
    },
  },
  {
    name: "CreateProjectGrant: the role keys the project does not define are named under roleKeys, the defined ones not",
    code: Code.FailedPrecondition,
    reason: "project.role.not_found",
    arrange: async (p) => {
      const projectId = await freshProject();
      return {
        call: () => projects(p).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["ghost", "reader", "phantom"] }),
        metadata: { roleKeys: "ghost,phantom" },
      };
    },
  },
  {
    name: "UpdateProjectGrant: an unknown grant is named by its projectId and grantId",
    code: Code.NotFound,
    reason: "project.grant.not_found",
    arrange: async (p) => {
      const grantId = unknown("grant");
      return { call: () => projects(p).updateProjectGrant({ projectId: w.p1, grantId, roleKeys: [] }), metadata: { projectId: w.p1, grantId } };
    },
  },
  {
    name: "RemoveProjectGrant: a grant of another project is named by the projectId and grantId sent",
    code: Code.NotFound,
    reason: "project.grant.not_found",
    arrange: async (p) => ({ call: () => projects(p).removeProjectGrant({ projectId: w.p2, grantId: w.g1 }), metadata: { projectId: w.p2, grantId: w.g1 } }),
  },
  {
    name: "UpdateApplication: an unknown application is named by its appId",
    code: Code.NotFound,
    reason: "application.not_found",
    arrange: async (p) => {
      const appId = unknown("app");
      return { call: () => apps(p).updateApplication({ projectId: w.p1, appId, name: "Renamed" }), metadata: { appId } };
    },
  },
  {
    name: "UpdateApplication: an application of another project is named by its appId",
    code: Code.NotFound,
    reason: "application.not_found",
    arrange: async (p) => ({ call: () => apps(p).updateApplication({ projectId: w.p2, appId: w.appId, name: "Renamed" }), metadata: { appId: w.appId } }),
  },
  {
    name: "DeactivateApplication: an unknown application is named by its appId",
    code: Code.NotFound,
    reason: "application.not_found",
    arrange: async (p) => {
      const appId = unknown("app");
      return { call: () => apps(p).deactivateApplication({ projectId: w.p1, appId }), metadata: { appId } };
    },
  },
  {
    name: "ReactivateApplication: an application of another project is named by its appId",
    code: Code.NotFound,
    reason: "application.not_found",
    arrange: async (p) => ({ call: () => apps(p).reactivateApplication({ projectId: w.p2, appId: w.appId }), metadata: { appId: w.appId } }),
  },
  {
    name: "RemoveApplication: an unknown application is named by its appId",
    code: Code.NotFound,
    reason: "application.not_found",
    arrange: async (p) => {
      const appId = unknown("app");
      return { call: () => apps(p).removeApplication({ projectId: w.p1, appId }), metadata: { appId } };
    },
  },
  {
    name: "RegenerateClientSecret: an application of another project is named by its appId",
    code: Code.NotFound,
    reason: "application.not_found",
    arrange: async (p) => ({ call: () => apps(p).regenerateClientSecret({ projectId: w.p2, appId: w.appId }), metadata: { appId: w.appId } }),
  },
];

describe("project, grant, role and application errors name what they are about (README Errors)", () => {
  itRefusesWithMetadata(cases);

  it.each(PROTOCOLS)("CreateProjectGrant: an organization that does not exist is named as organizationId (README: by the kind of object) (%s)", async (protocol) => {
    const projectId = await freshProject();
    const grantedOrganizationId = unknown("org");
    const error = await failure(projects(protocol).createProjectGrant({ projectId, grantedOrganizationId, roleKeys: ["reader"] }));
    expect({ code: error.code, reason: error.reason, metadata: error.metadata }).toEqual({
      code: Code.FailedPrecondition,
      reason: "organization.not_found",
      metadata: { organizationId: grantedOrganizationId },
    });
  });

  it.each(PROTOCOLS)("UpdateProjectGrant: the role keys the project does not define are named under roleKeys and as field violations (%s)", async (protocol) => {
    const projectId = await freshProject();
    const { grantId } = await projects(protocol).createProjectGrant({ projectId, grantedOrganizationId: w.orgB, roleKeys: ["reader"] });
    const error = await failure(projects(protocol).updateProjectGrant({ projectId, grantId, roleKeys: ["ghost", "reader", "phantom"] }));
    expect({ code: error.code, reason: error.reason, metadata: error.metadata, fields: error.fields }).toEqual({
      code: Code.InvalidArgument,
      reason: "project.role.not_found",
      metadata: { roleKeys: "ghost,phantom" },
      fields: ["role_keys[0]", "role_keys[2]"],
    });
  });
});
