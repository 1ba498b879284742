import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { notFound } from "../domain/errors.js";
import { readDetails } from "./details.js";

/** Reads a user of the selected organization; users may always read themselves. */
export async function getUser(deps: Deps, caller: Caller, userId: string) {
  const organization = await selectOrganization(deps, caller);
  if (userId !== caller.principal.userId) authorize(caller.principal, "user.read", { orgId: organization.id });
  const user = await deps.store.findUserById(userId);
  if (!user || user.orgId !== organization.id) throw notFound("user.not_found", "the user does not exist", { userId });
  return { user, details: await readDetails(deps.store, "user", user.id) };
}
