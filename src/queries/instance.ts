import type { Caller, Deps } from "../context.js";
import { requireInstancePermission } from "../access/require-instance-permission.js";
import { readDetails } from "./details.js";
import { listMembersOfScope } from "./members.js";
import type { PageRequest } from "./paging.js";

export async function getInstance(deps: Deps, caller: Caller) {
  requireInstancePermission(caller, "iam.read");
  const instance = await deps.store.getInstance();
  // Stryker disable next-line StringLiteral,ConditionalExpression: unreachable: the server serves only after the bootstrap made the instance; the message is for the log only
  if (!instance) throw new Error("instance missing after bootstrap");
  return { instance, details: await readDetails(deps.store, "instance", instance.id) };
}

/** The users holding instance roles, in the order they were added. */
export async function listInstanceMembers(deps: Deps, caller: Caller, input: PageRequest) {
  requireInstancePermission(caller, "iam.read");
  return listMembersOfScope(deps, "instance", caller.principal.instanceId, input);
}
