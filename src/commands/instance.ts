import type { Caller, Deps } from "../context.js";
import { canInstanceWide } from "../domain/authorization.js";
import { permissionDenied } from "../domain/errors.js";
import type { Permission } from "../domain/roles.js";
import { EventType } from "../events/types.js";
import { addMember } from "./add-member.js";

/** Throws permission_denied unless the caller holds `permission` instance-wide. */
export function requireInstancePermission(caller: Caller, permission: Permission): void {
  if (!canInstanceWide(caller.principal, permission)) {
    throw permissionDenied("permission.denied", `missing instance permission ${permission}`, { permission });
  }
}

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
      aggregate: { type: "instance", id: instanceId },
      eventType: EventType.instanceMemberAdded,
    },
    input.userId,
    input.roles,
  );
  return { details };
}
