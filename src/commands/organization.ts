import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { commitAs, type Expected } from "./commit-as.js";
import { authorize } from "../domain/authorization.js";
import { uniquenessKey } from "../domain/names.js";
import { detailsOfCreate } from "../events/details.js";
import { EventType } from "../events/types.js";
import { addMember } from "./add-member.js";
import { removeMember } from "./remove-member.js";
import { requireInstancePermission } from "../access/require-instance-permission.js";

export async function createOrganization(deps: Deps, caller: Caller, input: { name: string }) {
  requireInstancePermission(caller, "org.create");
  const organizationId = deps.ids.next();
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "organization.insert",
        row: { id: organizationId, instanceId: caller.principal.instanceId, name: input.name, nameKey: uniquenessKey(input.name), state: "active" },
      },
    ],
    events: [
      { aggregateType: "org", aggregateId: organizationId, type: EventType.orgAdded, payload: { name: input.name }, resourceOwner: organizationId },
    ],
  });
  return { organizationId, details: detailsOfCreate(events) };
}

export async function addOrganizationMember(deps: Deps, caller: Caller, input: { userId: string; roles: string[] }) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.member.write", { orgId: organization.id });
  const details = await addMember(
    deps,
    caller,
    {
      level: "org",
      scopeId: organization.id,
      ownerOrgId: organization.id,
      eventType: EventType.orgMemberAdded,
    },
    input.userId,
    input.roles,
  );
  return { details };
}

/**
 * Removes a user's roles in the selected organization. `org.member.write` there is checked on the
 * selection before the membership is looked up, so strangers learn nothing about who is a member.
 */
export async function removeOrganizationMember(deps: Deps, caller: Caller, input: { userId: string } & Expected) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "org.member.write", { orgId: organization.id });
  const target = { level: "org" as const, scopeId: organization.id, ownerOrgId: organization.id, eventType: EventType.orgMemberRemoved };
  return { details: await removeMember(deps, caller, target, input.userId, input) };
}
