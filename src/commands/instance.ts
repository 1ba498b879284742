import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import { EventType } from "../events/types.js";
import { addMember } from "./add-member.js";

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
