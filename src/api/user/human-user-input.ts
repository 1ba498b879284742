import type { CreateHumanUserRequest } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import type { CreateHumanUserInput } from "../../commands/human-user.js";

/**
 * A validated CreateHumanUserRequest as the command takes it: the one conversion CreateHumanUser and each user of a
 * bulk import share. `profile` and `email` are there: their `required` rules ran before (the validation interceptor, or
 * the import's check of each user).
 */
export function humanUserInputOf(request: CreateHumanUserRequest): CreateHumanUserInput {
  return {
    userName: request.userName,
    profile: request.profile!,
    email: request.email!,
    ...(request.phone ? { phone: request.phone } : {}),
    password: request.password,
    ...(request.hashedPassword ? { hashedPassword: request.hashedPassword.value } : {}),
    passwordChangeRequired: request.passwordChangeRequired,
    requestPasswordlessRegistration: request.requestPasswordlessRegistration,
    otpCode: request.otpCode,
    idps: request.idps,
  };
}
