import type { ServiceImpl } from "@connectrpc/connect";
import type { ProjectService } from "../../../gen/gatehouse/admin/v1/project_pb.js";
import { addProjectMember, addProjectRole, createProject, createProjectGrant } from "../../commands/project.js";
import { addProjectGrantMember, removeProjectGrantMember } from "../../commands/project-grant-member.js";
import type { Deps } from "../../context.js";
import { getProject, getProjectGrant, listProjectGrantMembers } from "../../queries/project.js";
import { callerOf } from "../caller.js";
import { toDetailsMessage } from "../convert.js";

export function createProjectService(deps: Deps): ServiceImpl<typeof ProjectService> {
  return {
    async createProject(request, context) {
      const { projectId, details } = await createProject(deps, callerOf(context), { name: request.name });
      return { projectId, details: toDetailsMessage(details) };
    },
    async getProject(request, context) {
      const { project, roles, details } = await getProject(deps, callerOf(context), request.projectId);
      return {
        project: {
          projectId: project.id,
          name: project.name,
          roles: roles.map((role) => ({ roleKey: role.roleKey, displayName: role.displayName })),
          details: toDetailsMessage(details),
        },
      };
    },
    async addProjectRole(request, context) {
      const { details } = await addProjectRole(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async addProjectMember(request, context) {
      const { details } = await addProjectMember(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async createProjectGrant(request, context) {
      const { grantId, details } = await createProjectGrant(deps, callerOf(context), request);
      return { grantId, details: toDetailsMessage(details) };
    },
    async getProjectGrant(request, context) {
      const { grant, details } = await getProjectGrant(deps, callerOf(context), request);
      return {
        grant: {
          grantId: grant.id,
          projectId: grant.projectId,
          grantedOrganizationId: grant.grantedOrgId,
          roleKeys: grant.roleKeys,
          details: toDetailsMessage(details),
        },
      };
    },
    async addProjectGrantMember(request, context) {
      const { details } = await addProjectGrantMember(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async listProjectGrantMembers(request, context) {
      const { members } = await listProjectGrantMembers(deps, callerOf(context), request);
      return {
        details: { totalResult: BigInt(members.length), nextPageToken: "" },
        members: members.map(({ row, details }) => ({ userId: row.userId, roles: row.roles, details: toDetailsMessage(details) })),
      };
    },
    async removeProjectGrantMember(request, context) {
      const { details } = await removeProjectGrantMember(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
  };
}
