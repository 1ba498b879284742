import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import { DEFAULT_LOCKOUT_POLICY, type LockoutPolicy } from "../domain/lockout-policy.js";
import { readDetails } from "./details.js";

/** InstanceService.GetLockoutPolicy (`iam.read`): the stored policy, or the default while none is stored. */
export async function getLockoutPolicy(deps: Deps, caller: Caller) {
  requireInstancePermission(caller, "iam.read");
  const { instanceId } = caller.principal;
  const stored = await deps.store.getLockoutPolicy(instanceId);
  const policy: LockoutPolicy = stored ? { maxPasswordAttempts: stored.maxPasswordAttempts } : DEFAULT_LOCKOUT_POLICY;
  return { policy, isDefault: stored === undefined, details: await readDetails(deps.store, "instance", instanceId) };
}
