import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { commitAs } from "./commit-as.js";
import { authorize } from "../domain/authorization.js";
import { checkUserName, uniquenessKey } from "../domain/names.js";
import { detailsOfCreate } from "../events/details.js";
import { EventType } from "../events/types.js";

export async function createMachineUser(deps: Deps, caller: Caller, input: { userName: string; name: string; description: string }) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.write", { orgId: organization.id });
  checkUserName(input.userName);
  const userId = deps.ids.next();
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "user.insert",
        row: {
          id: userId,
          instanceId: caller.principal.instanceId,
          orgId: organization.id,
          type: "machine",
          state: "active",
          userName: input.userName,
          userNameKey: uniquenessKey(input.userName),
          machineName: input.name,
          machineDescription: input.description,
        },
      },
    ],
    events: [
      {
        aggregateType: "user",
        aggregateId: userId,
        type: EventType.machineUserAdded,
        payload: { userName: input.userName, name: input.name, description: input.description },
        resourceOwner: organization.id,
      },
    ],
  });
  return { userId, details: detailsOfCreate(events) };
}
