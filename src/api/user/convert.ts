import { create } from "@bufbuild/protobuf";
import { type User, UserSchema, UserState } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import { type VisibleState, visibleState } from "../../domain/user-state.js";
import type { Details } from "../../events/details.js";
import type { UserIdpLinkRow, UserRow } from "../../store/rows.js";
import { toDetailsMessage } from "../convert.js";

const stateOf: Record<VisibleState, UserState> = {
  active: UserState.ACTIVE,
  initial: UserState.INITIAL,
  inactive: UserState.INACTIVE,
  locked: UserState.LOCKED,
};

function humanOf(user: UserRow, idpLinks: UserIdpLinkRow[]) {
  // Stryker disable StringLiteral,BooleanLiteral: the human columns are null only on machine rows; a human's row always has them (a phone with its verified flag), so no fallback below is ever taken
  return {
    profile: {
      firstName: user.firstName ?? "",
      lastName: user.lastName ?? "",
      nickName: user.nickName ?? "",
      displayName: user.displayName ?? "",
      preferredLanguage: user.preferredLanguage ?? "",
      gender: user.gender ?? 0,
    },
    email: { email: user.email ?? "", isEmailVerified: user.emailVerified ?? false },
    ...(user.phone ? { phone: { phone: user.phone, isPhoneVerified: user.phoneVerified ?? false } } : {}),
    idpLinks: idpLinks.map((link) => ({ configId: link.idpId, externalUserId: link.externalUserId, displayName: link.displayName })),
    hasPassword: user.passwordHash !== null,
    passwordChangeRequired: user.passwordChangeRequired ?? false,
    otpConfigured: user.otpSecretSealed !== null,
  };
}

// Stryker restore StringLiteral,BooleanLiteral
/** A stored user → the `User` message. Hashes and sealed secrets are read as booleans only. */
export function toUserMessage(user: UserRow, idpLinks: UserIdpLinkRow[], details: Details): User {
  return create(UserSchema, {
    userId: user.id,
    details: toDetailsMessage(details),
    state: stateOf[visibleState(user)],
    userName: user.userName,
    type:
      user.type === "machine"
        ? {
            case: "machine",
            // Stryker disable next-line StringLiteral: a machine's row always has its name and description (they are null only on human rows)
            value: { name: user.machineName ?? "", description: user.machineDescription ?? "" },
          }
        : { case: "human", value: humanOf(user, idpLinks) },
  });
}
