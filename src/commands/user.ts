import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { commitAs } from "./commit-as.js";
import { authorize } from "../domain/authorization.js";
import { invalidArgument, notFound } from "../domain/errors.js";
import { checkUserName, uniquenessKey } from "../domain/names.js";
import { issueToken } from "../domain/token.js";
import { detailsOfChange, detailsOfCreate } from "../events/details.js";
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

export async function addPersonalAccessToken(deps: Deps, caller: Caller, input: { userId: string; expirationDate?: Date }) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.write", { orgId: organization.id });
  const user = await deps.store.findUserById(input.userId);
  if (!user || user.orgId !== organization.id) throw notFound("user.not_found", "the user does not exist", { userId: input.userId });
  const at = deps.clock.now();
  if (input.expirationDate && input.expirationDate.getTime() <= at.getTime()) {
    throw invalidArgument("token.expiration_past", "the expiration date must be in the future", [
      { field: "expiration_date", description: "must be in the future", rule: "token.expiration_past" },
    ]);
  }
  const issued = issueToken(deps.ids.next());
  const span = await deps.store.aggregateSpan("user", user.id);
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "token.insert",
        row: {
          id: issued.tokenId,
          userId: user.id,
          secretHash: issued.secretHash,
          expiresAt: input.expirationDate?.getTime() ?? null,
          createdAt: at.getTime(),
        },
      },
    ],
    events: [
      {
        aggregateType: "user",
        aggregateId: user.id,
        type: EventType.personalAccessTokenAdded,
        // The token itself never enters the log.
        payload: { tokenId: issued.tokenId, expirationDate: input.expirationDate?.toISOString() ?? null },
        resourceOwner: organization.id,
      },
    ],
  }, at);
  return { tokenId: issued.tokenId, token: issued.token, details: detailsOfChange(events, span?.first) };
}
