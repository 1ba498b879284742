import type { ServiceImpl } from "@connectrpc/connect";
import type { OrganizationService } from "../../../gen/gatehouse/admin/v1/organization_pb.js";
import { addOrganizationMember, createOrganization } from "../../commands/organization.js";
import type { Deps } from "../../context.js";
import { getOrganization } from "../../queries/organization.js";
import { callerOf } from "../caller.js";
import { toDetailsMessage } from "../convert.js";

export function createOrganizationService(deps: Deps): Partial<ServiceImpl<typeof OrganizationService>> {
  return {
    async createOrganization(request, context) {
      const { organizationId, details } = await createOrganization(deps, callerOf(context), { name: request.name });
      return { organizationId, details: toDetailsMessage(details) };
    },
    async getOrganization(request, context) {
      const { organization, details } = await getOrganization(deps, callerOf(context), request.organizationId);
      return { organization: { organizationId: organization.id, name: organization.name, details: toDetailsMessage(details) } };
    },
    async addOrganizationMember(request, context) {
      const { details } = await addOrganizationMember(deps, callerOf(context), { userId: request.userId, roles: request.roles });
      return { details: toDetailsMessage(details) };
    },
  };
}
