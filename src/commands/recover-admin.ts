import type { Deps } from "../context.js";
import { uniquenessKey } from "../domain/names.js";
import { issueToken, type IssuedToken } from "../domain/token.js";
import type { NewEvent } from "../events/event.js";
import { SYSTEM_ACTOR } from "../events/event.js";
import { EventType } from "../events/types.js";
import type { RowWrite } from "../store/commit.js";
import { revokeTokensBeyondIssuer } from "./personal-access-token.js";

const ADMIN_USER_NAME = "admin";

/**
 * For an operator with access to the data dir who lost the admin token: issues a new IAM_OWNER token
 * for the `admin` machine user of the first organization, first re-creating that user or giving it
 * back IAM_OWNER if either is gone. One transaction; `instance.admin.recovered` records it.
 */
export async function recoverAdmin(deps: Pick<Deps, "store" | "clock" | "ids">, token: IssuedToken = issueToken(deps.ids.next())) {
  const instance = await deps.store.getInstance();
  if (!instance) throw new Error("the database has no instance yet: start the server once, it bootstraps one");
  const [found] = await deps.store.listUsers({ instanceId: instance.id, orgId: instance.defaultOrgId, userNameKey: uniquenessKey(ADMIN_USER_NAME), limit: 1 });
  const at = deps.clock.now();
  const writes: RowWrite[] = [];
  const events: NewEvent[] = [];
  const adminUserId = found?.row.id ?? deps.ids.next();
  if (!found) {
    writes.push({
      kind: "user.insert",
      row: {
        id: adminUserId,
        instanceId: instance.id,
        orgId: instance.defaultOrgId,
        type: "machine",
        state: "active",
        userName: ADMIN_USER_NAME,
        userNameKey: uniquenessKey(ADMIN_USER_NAME),
        machineName: "Administrator",
        machineDescription: "Re-created by gatehouse recover-admin; holds IAM_OWNER.",
      },
    });
    events.push({ aggregateType: "user", aggregateId: adminUserId, type: EventType.machineUserAdded, payload: { userName: ADMIN_USER_NAME, name: "Administrator" }, resourceOwner: instance.defaultOrgId });
  }
  const membership = found ? await deps.store.findMembership(adminUserId, "instance", instance.id) : undefined;
  if (!membership?.roles.includes("IAM_OWNER")) {
    // Tokens someone else issued for the admin while it held less must not become owner tokens.
    const revoked = found ? await revokeTokensBeyondIssuer(deps, adminUserId, instance.defaultOrgId, ["IAM_OWNER"], { level: "instance", scopeId: instance.id, ownerOrgId: instance.id }) : { writes: [], events: [] };
    writes.push(...revoked.writes);
    events.push(...revoked.events);
    const roles = [...new Set([...(membership?.roles ?? []), "IAM_OWNER"])];
    const membershipId = deps.ids.next();
    if (membership) writes.push({ kind: "membership.delete", id: membership.id });
    writes.push({ kind: "membership.insert", row: { id: membershipId, userId: adminUserId, level: "instance", scopeId: instance.id, ownerOrgId: instance.id, projectId: null, roles } });
    events.push({ aggregateType: "member", aggregateId: membershipId, type: EventType.instanceMemberAdded, payload: { userId: adminUserId, roles, level: "instance", scopeId: instance.id }, resourceOwner: instance.id });
  }
  writes.push({ kind: "token.insert", row: { id: token.tokenId, userId: adminUserId, secretHash: token.secretHash, expiresAt: null, createdAt: at.getTime(), issuerUserId: null } });
  events.push(
    { aggregateType: "user", aggregateId: adminUserId, type: EventType.personalAccessTokenAdded, payload: { tokenId: token.tokenId, expirationDate: null }, resourceOwner: instance.defaultOrgId },
    { aggregateType: "instance", aggregateId: instance.id, type: EventType.adminRecovered, payload: { userId: adminUserId, tokenId: token.tokenId, userCreated: !found }, resourceOwner: instance.id },
  );
  await deps.store.commit({ instanceId: instance.id, actor: SYSTEM_ACTOR, at, writes, events });
  return { adminUserId, tokenId: token.tokenId, token: token.token, userCreated: !found };
}
