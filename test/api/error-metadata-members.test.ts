import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { PROTOCOLS, type Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";
import { itRefusesWithMetadata, type MetadataCase } from "../support/error-metadata.js";

/*
 * README "Errors": the ErrorInfo metadata names what the error is about, under the request's own field
 * names — here the `userId` that is no member or no user, the `roles` that are not of the level, the
 * `role` a removal would leave without a holder. Membership RPCs of every level.
 */
const t = useTestServer();
let w: World;
let n = 0;

beforeAll(async () => {
  w = await buildWorld(t.clients, t.server.adminToken, "errmeta-members");
});

const instance = (protocol: Protocol) => t.clients.client(InstanceService, protocol, { token: t.server.adminToken });
const orgs = (protocol: Protocol) => t.clients.client(OrganizationService, protocol, { token: t.server.adminToken, orgId: w.orgA });
const projects = (protocol: Protocol) => t.clients.client(ProjectService, protocol, { token: t.server.adminToken, orgId: w.orgA });
/** A user of organization B that holds no membership anywhere yet. */
const loneUser = async () => (await createActor(t.clients, t.server.adminToken, w.orgB, `errmeta-lone-${++n}`)).userId;
const unknownUser = () => `no-such-user-${++n}`;

const cases: MetadataCase[] = [
  {
    name: "AddInstanceMember: a user that does not exist is named by its userId",
    code: Code.FailedPrecondition,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => instance(p).addInstanceMember({ userId, roles: ["IAM_OWNER_VIEWER"] }), metadata: { userId } };
    },
  },
  {
    name: "AddOrganizationMember: a user that does not exist is named by its userId",
    code: Code.FailedPrecondition,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => orgs(p).addOrganizationMember({ userId, roles: ["ORG_OWNER_VIEWER"] }), metadata: { userId } };
    },
  },
  {
    name: "AddProjectMember: a user that does not exist is named by its userId",
    code: Code.FailedPrecondition,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => projects(p).addProjectMember({ projectId: w.p1, userId, roles: ["PROJECT_OWNER_VIEWER"] }), metadata: { userId } };
    },
  },
  {
    name: "AddProjectGrantMember: a user that does not exist is named by its userId",
    code: Code.FailedPrecondition,
    reason: "user.not_found",
    arrange: async (p) => {
      const userId = unknownUser();
      return { call: () => projects(p).addProjectGrantMember({ projectId: w.p1, grantId: w.g1, userId }), metadata: { userId } };
    },
  },
  {
    name: "AddOrganizationMember: the roles that are not organization roles are named, in the order sent",
    code: Code.InvalidArgument,
    reason: "member.role_invalid",
    fields: ["roles[1]", "roles[2]"],
    arrange: async (p) => {
      const userId = await loneUser();
      return { call: () => orgs(p).addOrganizationMember({ userId, roles: ["ORG_OWNER_VIEWER", "PROJECT_OWNER", "reader"] }), metadata: { roles: "PROJECT_OWNER,reader" } };
    },
  },
  {
    name: "RemoveInstanceMember: a user without instance roles is named by its userId",
    code: Code.NotFound,
    reason: "member.not_found",
    arrange: async (p) => {
      const userId = await loneUser();
      return { call: () => instance(p).removeInstanceMember({ userId }), metadata: { userId } };
    },
  },
  {
    name: "RemoveOrganizationMember: a user that is no member of the organization is named by its userId",
    code: Code.NotFound,
    reason: "member.not_found",
    arrange: async (p) => {
      const userId = await loneUser();
      return { call: () => orgs(p).removeOrganizationMember({ userId }), metadata: { userId } };
    },
  },
  {
    name: "RemoveProjectMember: a user that is no member of the project is named by its userId",
    code: Code.NotFound,
    reason: "member.not_found",
    arrange: async (p) => {
      const userId = await loneUser();
      return { call: () => projects(p).removeProjectMember({ projectId: w.p1, userId }), metadata: { userId } };
    },
  },
  {
    name: "RemoveProjectGrantMember: a user that is no member of the grant is named by its userId",
    code: Code.NotFound,
    reason: "member.not_found",
    arrange: async (p) => {
      const userId = await loneUser();
      return { call: () => projects(p).removeProjectGrantMember({ projectId: w.p1, grantId: w.g1, userId }), metadata: { userId } };
    },
  },
];

describe("membership errors name what they are about (README Errors)", () => {
  itRefusesWithMetadata(cases);

  it.each(PROTOCOLS)("RemoveInstanceMember: removing the only IAM_OWNER names the role it would leave without a holder (%s)", async (protocol) => {
    // Nothing in this file grants IAM_OWNER, so the bootstrap admin is its only holder.
    const { members } = await instance(protocol).listInstanceMembers({});
    const owners = members.filter((member) => member.roles.includes("IAM_OWNER"));
    expect(owners).toHaveLength(1);
    const error = await failure(instance(protocol).removeInstanceMember({ userId: owners[0]!.userId }));
    expect({ code: error.code, reason: error.reason, metadata: error.metadata }).toEqual({ code: Code.FailedPrecondition, reason: "member.last_owner", metadata: { role: "IAM_OWNER" } });
  });
});
