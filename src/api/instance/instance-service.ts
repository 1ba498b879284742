import type { ServiceImpl } from "@connectrpc/connect";
import type { InstanceService } from "../../../gen/gatehouse/admin/v1/instance_pb.js";
import { addInstanceMember, removeInstanceMember } from "../../commands/instance.js";
import { setLockoutPolicy } from "../../commands/lockout-policy.js";
import type { Deps } from "../../context.js";
import { getInstance, listInstanceMembers } from "../../queries/instance.js";
import { getLockoutPolicy } from "../../queries/lockout-policy.js";
import { callerOf } from "../caller.js";
import { toDetailsMessage, toMemberPage } from "../convert.js";

export function createInstanceService(deps: Deps): Partial<ServiceImpl<typeof InstanceService>> {
  return {
    async getInstance(_request, context) {
      const { instance, details } = await getInstance(deps, callerOf(context));
      return { instanceId: instance.id, name: instance.name, defaultOrganizationId: instance.defaultOrgId, details: toDetailsMessage(details) };
    },
    async addInstanceMember(request, context) {
      const { details } = await addInstanceMember(deps, callerOf(context), { userId: request.userId, roles: request.roles });
      return { details: toDetailsMessage(details) };
    },
    async listInstanceMembers(request, context) {
      return toMemberPage(await listInstanceMembers(deps, callerOf(context), { pageSize: request.pageSize, pageToken: request.pageToken }));
    },
    async getLockoutPolicy(_request, context) {
      const { policy, isDefault, details } = await getLockoutPolicy(deps, callerOf(context));
      return { maxPasswordAttempts: policy.maxPasswordAttempts, isDefault, details: toDetailsMessage(details) };
    },
    async setLockoutPolicy(request, context) {
      const { details } = await setLockoutPolicy(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async removeInstanceMember(request, context) {
      const { details } = await removeInstanceMember(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
  };
}
