import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import { EventType } from "../events/types.js";
import { addMember } from "./add-member.js";
import type { Expected } from "./commit-as.js";
import { LAST_OWNER_ROLE, removeMember } from "./remove-member.js";

export async function addInstanceMember(deps: Deps, caller: Caller, input: { userId: string; roles: string[] }) {
  requireInstancePermission(caller, "iam.member.write");
  const instanceId = caller.principal.instanceId;
  const details = await addMember(
    deps,
    caller,
    {
      level: "instance",
      scopeId: instanceId,
      ownerOrgId: instanceId,
      eventType: EventType.instanceMemberAdded,
    },
    input.userId,
    input.roles,
  );
  return { details };
}

/** Removes a user's instance roles; the instance always keeps an IAM_OWNER (`member.last_owner`). */
export async function removeInstanceMember(deps: Deps, caller: Caller, input: { userId: string } & Expected) {
  requireInstancePermission(caller, "iam.member.write");
  const instanceId = caller.principal.instanceId;
  const target = { level: "instance" as const, scopeId: instanceId, ownerOrgId: instanceId, eventType: EventType.instanceMemberRemoved, keepLastHolderOf: LAST_OWNER_ROLE };
  return { details: await removeMember(deps, caller, target, input.userId, input) };
}
