import type { ServiceImpl } from "@connectrpc/connect";
import type { UserService } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import { addPersonalAccessToken, createMachineUser } from "../../commands/user.js";
import type { Deps } from "../../context.js";
import { getUser } from "../../queries/user.js";
import { callerOf } from "../caller.js";
import { optionalDate, toDetailsMessage } from "../convert.js";
import { toUserMessage } from "./convert.js";

export function createUserService(deps: Deps): Partial<ServiceImpl<typeof UserService>> {
  return {
    async createMachineUser(request, context) {
      const { userId, details } = await createMachineUser(deps, callerOf(context), {
        userName: request.userName,
        name: request.name,
        description: request.description,
      });
      return { userId, details: toDetailsMessage(details) };
    },
    async getUser(request, context) {
      const { user, details } = await getUser(deps, callerOf(context), request.userId);
      return { user: toUserMessage(user, details) };
    },
    async addPersonalAccessToken(request, context) {
      const expirationDate = optionalDate(request.expirationDate);
      const result = await addPersonalAccessToken(deps, callerOf(context), {
        userId: request.userId,
        ...(expirationDate ? { expirationDate } : {}),
      });
      return { tokenId: result.tokenId, token: result.token, details: toDetailsMessage(result.details) };
    },
  };
}
