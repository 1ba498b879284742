import type { ServiceImpl } from "@connectrpc/connect";
import type { OrganizationService } from "../../../gen/gatehouse/admin/v1/organization_pb.js";
import { addOrganizationMember, createOrganization, removeOrganizationMember } from "../../commands/organization.js";
import { changeOrganizationState } from "../../commands/organization-state.js";
import type { Deps } from "../../context.js";
import { getOrganization, listOrganizationMembers, listOrganizations } from "../../queries/organization.js";
import { callerOf } from "../caller.js";
import { listDetails, toDetailsMessage, toMemberPage } from "../convert.js";
import { fromOrganizationState, toOrganizationMessage } from "./convert.js";

export function createOrganizationService(deps: Deps): Partial<ServiceImpl<typeof OrganizationService>> {
  return {
    async createOrganization(request, context) {
      const { organizationId, details } = await createOrganization(deps, callerOf(context), { name: request.name });
      return { organizationId, details: toDetailsMessage(details) };
    },
    async getOrganization(request, context) {
      const { organization, details } = await getOrganization(deps, callerOf(context), request.organizationId);
      return { organization: toOrganizationMessage(organization, details) };
    },
    async addOrganizationMember(request, context) {
      const { details } = await addOrganizationMember(deps, callerOf(context), { userId: request.userId, roles: request.roles });
      return { details: toDetailsMessage(details) };
    },
    async listOrganizations(request, context) {
      const state = fromOrganizationState(request.state);
      const input = { pageSize: request.pageSize, pageToken: request.pageToken, name: request.name, ...(state ? { state } : {}) };
      const page = await listOrganizations(deps, callerOf(context), input);
      return {
        details: listDetails(page),
        organizations: page.organizations.map(({ row, details }) => toOrganizationMessage(row, details)),
      };
    },
    async listOrganizationMembers(request, context) {
      return toMemberPage(await listOrganizationMembers(deps, callerOf(context), { pageSize: request.pageSize, pageToken: request.pageToken }));
    },
    async removeOrganizationMember(request, context) {
      const { details } = await removeOrganizationMember(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async deactivateOrganization(request, context) {
      const { details } = await changeOrganizationState(deps, callerOf(context), request.organizationId, "deactivate", request);
      return { details: toDetailsMessage(details) };
    },
    async reactivateOrganization(request, context) {
      const { details } = await changeOrganizationState(deps, callerOf(context), request.organizationId, "reactivate", request);
      return { details: toDetailsMessage(details) };
    },
  };
}
