import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import type { LockoutPolicy } from "../domain/lockout-policy.js";
import { type Details, detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import { spanOf } from "../queries/details.js";
import { commitAs, detailsOfNoChange, type Expected, expectationOf } from "./commit-as.js";

/**
 * InstanceService.SetLockoutPolicy (`iam.write`): replaces the instance's lockout policy. The policy belongs to the
 * instance, so its details and `expected_sequence` are the instance aggregate's. Setting the policy in force again
 * is a no-op (no event), as every update of Gatehouse is.
 */
export async function setLockoutPolicy(deps: Deps, caller: Caller, input: LockoutPolicy & Expected): Promise<{ details: Details }> {
  requireInstancePermission(caller, "iam.write");
  const { instanceId } = caller.principal;
  const expect = expectationOf("instance", instanceId, input);
  const stored = await deps.store.getLockoutPolicy(instanceId);
  if (stored?.maxPasswordAttempts === input.maxPasswordAttempts) {
    return { details: await detailsOfNoChange(deps, { type: "instance", id: instanceId }, expect) };
  }
  const span = await spanOf(deps.store, "instance", instanceId);
  const committed = await commitAs(deps, caller, {
    writes: [{ kind: "lockoutPolicy.put", row: { instanceId, maxPasswordAttempts: input.maxPasswordAttempts } }],
    events: [{ aggregateType: "instance", aggregateId: instanceId, type: EventType.lockoutPolicySet, payload: { maxPasswordAttempts: input.maxPasswordAttempts }, resourceOwner: instanceId }],
    expect,
  });
  return { details: detailsOfChange(committed, span.first) };
}
