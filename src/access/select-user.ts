import type { Caller, Deps } from "../context.js";
import { authorize, type Reach } from "../domain/authorization.js";
import { notFound } from "../domain/errors.js";
import type { OrganizationRow, UserRow } from "../store/rows.js";
import { requireCeilingOver } from "./privilege-ceiling.js";
import { selectOrganization } from "./select-organization.js";

export interface SelectedUser {
  organization: OrganizationRow;
  user: UserRow;
  /** The fingerprint of the memberships the privilege ceiling was checked against (none for oneself). */
  checkedMemberships?: string;
}

/**
 * A user of the selected organization whose credentials or identity the caller may act on:
 * `user.write` there (checked on the ids sent, before any look-up, so strangers learn nothing), the
 * user in that organization (not_found otherwise), and the privilege ceiling over that user for what the
 * operation reaches (its credentials unless said otherwise).
 */
export async function selectManagedUser(deps: Deps, caller: Caller, userId: string, reach: Reach = "credentials"): Promise<SelectedUser> {
  const selected = await selectUserToManage(deps, caller, userId);
  // Undefined for oneself: an absent fingerprint and an undefined one are the same to every reader.
  return { ...selected, checkedMemberships: await requireCeilingOver(deps, caller, selected.user, reach) };
}

/**
 * A user of the selected organization, for `user.write` operations that do not hand the caller any
 * of the user's credentials (no privilege ceiling).
 */
export async function selectUserToManage(deps: Deps, caller: Caller, userId: string): Promise<SelectedUser> {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.write", { orgId: organization.id });
  const user = await deps.store.findUserById(userId);
  if (!user || user.orgId !== organization.id) throw notFound("user.not_found", "the user does not exist", { userId });
  return { organization, user };
}

/** Like selectManagedUser, but a user may always act on itself (its own tokens). */
export async function selectSelfOrManagedUser(deps: Deps, caller: Caller, userId: string, reach: Reach = "credentials"): Promise<SelectedUser> {
  if (userId !== caller.principal.userId) return selectManagedUser(deps, caller, userId, reach);
  const user = await deps.store.findUserById(userId);
  // The caller's own user and organization were read by authentication in this very call: only a removal of the
  // user racing this call gets here without them, which the guard answers with not_found rather than a crash.
  const organization = user && (await deps.store.findOrganizationById(user.orgId));
  // Stryker disable next-line LogicalOperator: organizations are never removed, so without the user there is no organization either
  if (!user || !organization) throw notFound("user.not_found", "the user does not exist", { userId });
  return { organization, user };
}
