import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { UserService } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import { resendEmailCode, setEmail, verifyEmail } from "../../commands/email-verification.js";
import { createHumanUser } from "../../commands/human-user.js";
import { addPersonalAccessToken, removePersonalAccessToken } from "../../commands/personal-access-token.js";
import { createMachineUser } from "../../commands/user.js";
import { changeUserState, removeUser } from "../../commands/user-lifecycle.js";
import { setPassword } from "../../commands/set-password.js";
import { verifyPassword } from "../../commands/verify-password.js";
import type { Deps } from "../../context.js";
import { listPersonalAccessTokens } from "../../queries/personal-access-token.js";
import { getUser, listUsers } from "../../queries/user.js";
import { callerOf } from "../caller.js";
import { listDetails, optionalDate, optionalTimestamp, toDetailsMessage } from "../convert.js";
import { toUserMessage } from "./convert.js";
import { humanUserInputOf } from "./human-user-input.js";
import { createImportHandlers } from "./import-human-users.js";

export function createUserService(deps: Deps): ServiceImpl<typeof UserService> {
  return {
    async createHumanUser(request, context) {
      const result = await createHumanUser(deps, callerOf(context), humanUserInputOf(request));
      const expiration = result.passwordless && create(DurationSchema, { seconds: BigInt(result.passwordless.expiresInSeconds) });
      return {
        userId: result.userId,
        details: toDetailsMessage(result.details),
        ...(result.passwordless ? { passwordlessRegistration: { link: result.passwordless.link, lifetime: expiration, expiration } } : {}),
      };
    },
    async verifyEmail(request, context) {
      const { details } = await verifyEmail(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async createMachineUser(request, context) {
      const { userId, details } = await createMachineUser(deps, callerOf(context), request);
      return { userId, details: toDetailsMessage(details) };
    },
    async getUser(request, context) {
      const { user, idpLinks, details } = await getUser(deps, callerOf(context), request.userId);
      return { user: toUserMessage(user, idpLinks, details) };
    },
    async listUsers(request, context) {
      const page = await listUsers(deps, callerOf(context), request);
      return {
        details: listDetails(page),
        users: page.users.map(({ user, idpLinks, details }) => toUserMessage(user, idpLinks, details)),
      };
    },
    async setEmail(request, context) {
      const { details, verificationCode } = await setEmail(deps, callerOf(context), request);
      return { details: toDetailsMessage(details), verificationCode };
    },
    async resendEmailCode(request, context) {
      const { details, verificationCode } = await resendEmailCode(deps, callerOf(context), request);
      return { details: toDetailsMessage(details), verificationCode };
    },
    async addPersonalAccessToken(request, context) {
      const expirationDate = optionalDate(request.expirationDate);
      const result = await addPersonalAccessToken(deps, callerOf(context), { userId: request.userId, ...(expirationDate ? { expirationDate } : {}) });
      return { tokenId: result.tokenId, token: result.token, details: toDetailsMessage(result.details) };
    },
    async listPersonalAccessTokens(request, context) {
      const page = await listPersonalAccessTokens(deps, callerOf(context), request);
      return {
        details: listDetails(page),
        tokens: page.tokens.map((token) => ({
          tokenId: token.tokenId,
          creationDate: optionalTimestamp(token.creationDate),
          expirationDate: optionalTimestamp(token.expirationDate),
          issuerId: token.issuerId,
        })),
      };
    },
    async removePersonalAccessToken(request, context) {
      const { details } = await removePersonalAccessToken(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async deactivateUser(request, context) {
      const { details } = await changeUserState(deps, callerOf(context), request.userId, "deactivate", request);
      return { details: toDetailsMessage(details) };
    },
    async reactivateUser(request, context) {
      const { details } = await changeUserState(deps, callerOf(context), request.userId, "reactivate", request);
      return { details: toDetailsMessage(details) };
    },
    async lockUser(request, context) {
      const { details } = await changeUserState(deps, callerOf(context), request.userId, "lock", request);
      return { details: toDetailsMessage(details) };
    },
    async unlockUser(request, context) {
      const { details } = await changeUserState(deps, callerOf(context), request.userId, "unlock", request);
      return { details: toDetailsMessage(details) };
    },
    async verifyPassword(request, context) {
      const named = request.user.case === "userId" ? { userId: request.user.value } : { loginName: request.user.value };
      const result = await verifyPassword(deps, callerOf(context), { ...named, password: request.password, signal: context.signal });
      return { details: toDetailsMessage(result.details), passwordChangeRequired: result.passwordChangeRequired };
    },
    async setPassword(request, context) {
      const { details } = await setPassword(deps, callerOf(context), request);
      return { details: toDetailsMessage(details) };
    },
    async removeUser(request, context) {
      const { details } = await removeUser(deps, callerOf(context), request.userId, request);
      return { details: toDetailsMessage(details) };
    },
    ...createImportHandlers(deps),
  };
}
