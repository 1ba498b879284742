import type { ServiceImpl } from "@connectrpc/connect";
import type { ProjectService } from "../../../gen/gatehouse/admin/v1/project_pb.js";
import { addProjectMember, addProjectRole, createProject, createProjectGrant, removeProjectMember } from "../../commands/project.js";
import { addProjectGrantMember, removeProjectGrantMember } from "../../commands/project-grant-member.js";
import { removeProjectGrant, updateProjectGrant } from "../../commands/project-grant-lifecycle.js";
import { changeProjectState, removeProject, updateProject } from "../../commands/project-lifecycle.js";
import { removeProjectRole } from "../../commands/project-role.js";
import type { Deps } from "../../context.js";
import {
  getProject,
  getProjectGrant,
  listProjectGrantMembers,
  listProjectGrants,
  listProjectMembers,
  listProjectRoles,
  listProjects,
} from "../../queries/project.js";
import { callerOf } from "../caller.js";
import { listDetails, toDetailsMessage, toMemberPage } from "../convert.js";
import { fromProjectState, toGrantMessage, toProjectMessage, toRoleMessage } from "./convert.js";

const written = async (write: Promise<{ details: Parameters<typeof toDetailsMessage>[0] }>) => ({ details: toDetailsMessage((await write).details) });

export function createProjectService(deps: Deps): ServiceImpl<typeof ProjectService> {
  return {
    async createProject(request, context) {
      const { projectId, details } = await createProject(deps, callerOf(context), { name: request.name });
      return { projectId, details: toDetailsMessage(details) };
    },
    async getProject(request, context) {
      return { project: toProjectMessage(await getProject(deps, callerOf(context), request.projectId)) };
    },
    async listProjects(request, context) {
      const state = fromProjectState(request.state);
      const input = { pageSize: request.pageSize, pageToken: request.pageToken, name: request.name, ...(state ? { state } : {}) };
      const page = await listProjects(deps, callerOf(context), input);
      return { details: listDetails(page), projects: page.projects.map(toProjectMessage) };
    },
    updateProject: (request, context) => written(updateProject(deps, callerOf(context), request)),
    removeProject: (request, context) => written(removeProject(deps, callerOf(context), request.projectId, request)),
    deactivateProject: (request, context) => written(changeProjectState(deps, callerOf(context), request.projectId, "deactivate", request)),
    reactivateProject: (request, context) => written(changeProjectState(deps, callerOf(context), request.projectId, "reactivate", request)),
    addProjectRole: (request, context) => written(addProjectRole(deps, callerOf(context), request)),
    async listProjectRoles(request, context) {
      const page = await listProjectRoles(deps, callerOf(context), request);
      return { details: listDetails(page), roles: page.roles.map(toRoleMessage) };
    },
    removeProjectRole: (request, context) => written(removeProjectRole(deps, callerOf(context), request)),
    addProjectMember: (request, context) => written(addProjectMember(deps, callerOf(context), request)),
    async listProjectMembers(request, context) {
      return toMemberPage(await listProjectMembers(deps, callerOf(context), request));
    },
    removeProjectMember: (request, context) => written(removeProjectMember(deps, callerOf(context), request)),
    async createProjectGrant(request, context) {
      const { grantId, details } = await createProjectGrant(deps, callerOf(context), request);
      return { grantId, details: toDetailsMessage(details) };
    },
    async getProjectGrant(request, context) {
      const { grant, details } = await getProjectGrant(deps, callerOf(context), request);
      return { grant: toGrantMessage(grant, details) };
    },
    async listProjectGrants(request, context) {
      const page = await listProjectGrants(deps, callerOf(context), request);
      return { details: listDetails(page), grants: page.grants.map(({ row, details }) => toGrantMessage(row, details)) };
    },
    updateProjectGrant: (request, context) => written(updateProjectGrant(deps, callerOf(context), request)),
    removeProjectGrant: (request, context) => written(removeProjectGrant(deps, callerOf(context), request)),
    addProjectGrantMember: (request, context) => written(addProjectGrantMember(deps, callerOf(context), request)),
    async listProjectGrantMembers(request, context) {
      return toMemberPage(await listProjectGrantMembers(deps, callerOf(context), request));
    },
    removeProjectGrantMember: (request, context) => written(removeProjectGrantMember(deps, callerOf(context), request)),
  };
}
