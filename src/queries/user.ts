import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { emailKey } from "../domain/contact.js";
import { notFound } from "../domain/errors.js";
import { uniquenessKey } from "../domain/names.js";
import { readDetails } from "./details.js";
import { readPage } from "./paging.js";

/** Reads a user of the selected organization, with its IDP links; users may always read themselves. */
export async function getUser(deps: Deps, caller: Caller, userId: string) {
  const organization = await selectOrganization(deps, caller);
  if (userId !== caller.principal.userId) authorize(caller.principal, "user.read", { orgId: organization.id });
  const user = await deps.store.findUserById(userId);
  if (!user || user.orgId !== organization.id) throw notFound("user.not_found", "the user does not exist", { userId });
  const [idpLinks, details] = await Promise.all([deps.store.listIdpLinksOfUser(user.id), readDetails(deps.store, "user", user.id)]);
  return { user, idpLinks, details };
}

/** Users of the selected organization in creation order; exact, case-insensitive filters. */
export async function listUsers(deps: Deps, caller: Caller, input: { pageSize: number; pageToken: string; userName: string; email: string }) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "user.read", { orgId: organization.id });
  const filter = {
    instanceId: organization.instanceId,
    orgId: organization.id,
    ...(input.userName ? { userNameKey: uniquenessKey(input.userName) } : {}),
    ...(input.email ? { emailKey: emailKey(input.email.trim()) } : {}),
  };
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listUsers({ ...filter, ...window }),
    () => deps.store.countUsers(filter),
  );
  const users = await Promise.all(
    rows.map(async (user) => ({ user, idpLinks: await deps.store.listIdpLinksOfUser(user.id), details: await readDetails(deps.store, "user", user.id) })),
  );
  return { users, total, nextPageToken };
}
