import { selectProject } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, notFound } from "../domain/errors.js";
import type { NewEvent } from "../events/event.js";
import { detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import type { RowWrite } from "../store/commit.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import { spanOf } from "../queries/details.js";

/**
 * Removes a role key from a project and, in the same transaction, from every grant of the project that
 * hands it out (each grant change its own event). Memberships hold management roles (PROJECT_OWNER, …),
 * which are not project role keys, so none changes: a role key spelled like a management role must not
 * take that role from anyone.
 */
export async function removeProjectRole(deps: Deps, caller: Caller, input: { projectId: string; roleKey: string } & Expected) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.role.write");
  const roles = await deps.store.listProjectRoles(project.id);
  // Stryker disable next-line ConditionalExpression: a fast answer only; without it the store's conditional delete fails and the re-read gives the same project.role.not_found
  if (!roles.some((role) => role.roleKey === input.roleKey)) throw roleNotFound(input.roleKey);
  const writes: RowWrite[] = [];
  const events: NewEvent[] = [];
  for (const grant of await deps.store.listProjectGrantsOfProject(project.id)) {
    if (!grant.roleKeys.includes(input.roleKey)) continue;
    const roleKeys = grant.roleKeys.filter((key) => key !== input.roleKey);
    writes.push({ kind: "projectGrant.setRoleKeys", id: grant.id, roleKeys });
    events.push({
      aggregateType: "project.grant",
      aggregateId: grant.id,
      type: EventType.projectGrantChanged,
      payload: { roleKeys, removedRoleKeys: [input.roleKey] },
      resourceOwner: organization.id,
    });
  }
  writes.push({ kind: "projectRole.delete", projectId: project.id, roleKey: input.roleKey });
  events.push({ aggregateType: "project", aggregateId: project.id, type: EventType.projectRoleRemoved, payload: { roleKey: input.roleKey }, resourceOwner: organization.id });
  const span = await spanOf(deps.store, "project", project.id);
  try {
    return { details: detailsOfChange(await commitAs(deps, caller, { writes, events, expect: expectationOf("project", project.id, input) }), span.first) };
  } catch (error) {
    if (!(error instanceof DomainError && error.reason === "store.condition_failed")) throw error;
    // Removed concurrently: answer as the call after it would.
    if (!(await deps.store.listProjectRoles(project.id)).some((role) => role.roleKey === input.roleKey)) throw roleNotFound(input.roleKey);
    throw error;
  }
}

const roleNotFound = (roleKey: string) => notFound("project.role.not_found", "the project has no such role", { roleKey });
