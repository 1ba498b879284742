import type { Deps } from "../context.js";
import { uniquenessKey } from "../domain/names.js";
import { DEFAULT_PASSWORD_POLICY } from "../domain/password-policy.js";
import type { IssuedToken } from "../domain/token.js";
import { SYSTEM_ACTOR } from "../events/event.js";
import { EventType } from "../events/types.js";

export interface BootstrapInput {
  instanceName: string;
  organizationName: string;
  adminUserName: string;
  adminToken: IssuedToken;
}

/**
 * First start on an empty database: the instance, a first organization and an admin machine user
 * holding IAM_OWNER and ORG_OWNER with one personal access token — all in one transaction, so a
 * crash leaves either nothing (and the next start bootstraps again) or everything.
 */
export async function bootstrapInstance(deps: Deps, input: BootstrapInput) {
  const instanceId = deps.ids.next();
  const organizationId = deps.ids.next();
  const adminUserId = deps.ids.next();
  const at = deps.clock.now();
  const instanceMembershipId = deps.ids.next();
  const orgMembershipId = deps.ids.next();
  const membership = (id: string, level: "instance" | "org", scopeId: string, role: string) => ({
    kind: "membership.insert" as const,
    row: { id, userId: adminUserId, level, scopeId, ownerOrgId: scopeId, projectId: null, roles: [role] },
  });
  await deps.store.commit({
    instanceId,
    actor: SYSTEM_ACTOR,
    at,
    writes: [
      { kind: "instance.insert", row: { id: instanceId, name: input.instanceName, defaultOrgId: organizationId } },
      {
        kind: "organization.insert",
        row: { id: organizationId, instanceId, name: input.organizationName, nameKey: uniquenessKey(input.organizationName), state: "active" },
      },
      {
        kind: "user.insert",
        row: {
          id: adminUserId,
          instanceId,
          orgId: organizationId,
          type: "machine",
          state: "active",
          userName: input.adminUserName,
          userNameKey: uniquenessKey(input.adminUserName),
          machineName: "Administrator",
          machineDescription: "Created at bootstrap; holds IAM_OWNER and ORG_OWNER.",
        },
      },
      membership(instanceMembershipId, "instance", instanceId, "IAM_OWNER"),
      membership(orgMembershipId, "org", organizationId, "ORG_OWNER"),
      { kind: "passwordPolicy.insert", row: { instanceId, ...DEFAULT_PASSWORD_POLICY } },
      {
        kind: "token.insert",
        row: { id: input.adminToken.tokenId, userId: adminUserId, secretHash: input.adminToken.secretHash, expiresAt: null, createdAt: at.getTime(), issuerUserId: null },
      },
    ],
    events: [
      { aggregateType: "instance", aggregateId: instanceId, type: EventType.instanceAdded, payload: { name: input.instanceName }, resourceOwner: instanceId },
      {
        aggregateType: "instance",
        aggregateId: instanceId,
        type: EventType.passwordPolicyAdded,
        payload: { ...DEFAULT_PASSWORD_POLICY },
        resourceOwner: instanceId,
      },
      { aggregateType: "org", aggregateId: organizationId, type: EventType.orgAdded, payload: { name: input.organizationName }, resourceOwner: organizationId },
      {
        aggregateType: "user",
        aggregateId: adminUserId,
        type: EventType.machineUserAdded,
        payload: { userName: input.adminUserName, name: "Administrator" },
        resourceOwner: organizationId,
      },
      {
        aggregateType: "member",
        aggregateId: instanceMembershipId,
        type: EventType.instanceMemberAdded,
        payload: { userId: adminUserId, roles: ["IAM_OWNER"], level: "instance", scopeId: instanceId },
        resourceOwner: instanceId,
      },
      {
        aggregateType: "member",
        aggregateId: orgMembershipId,
        type: EventType.orgMemberAdded,
        payload: { userId: adminUserId, roles: ["ORG_OWNER"], level: "org", scopeId: organizationId },
        resourceOwner: organizationId,
      },
      {
        aggregateType: "user",
        aggregateId: adminUserId,
        type: EventType.personalAccessTokenAdded,
        payload: { tokenId: input.adminToken.tokenId, expirationDate: null },
        resourceOwner: organizationId,
      },
    ],
  });
  return { instanceId, organizationId, adminUserId };
}
