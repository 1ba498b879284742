import { create } from "@bufbuild/protobuf";
import { type User, UserSchema, UserState } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import type { Details } from "../../events/details.js";
import type { UserRow } from "../../store/rows.js";
import { toDetailsMessage } from "../convert.js";

const stateOf: Record<UserRow["state"], UserState> = { active: UserState.ACTIVE, initial: UserState.INITIAL };

/** A stored user → the `User` message; secrets are not on the row, so they cannot leak from here. */
export function toUserMessage(user: UserRow, details: Details): User {
  return create(UserSchema, {
    userId: user.id,
    details: toDetailsMessage(details),
    state: stateOf[user.state],
    userName: user.userName,
    type:
      user.type === "machine"
        ? { case: "machine", value: { name: user.machineName ?? "", description: user.machineDescription ?? "" } }
        : { case: undefined },
  });
}
