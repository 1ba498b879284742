import { selectOrganization } from "../access/select-organization.js";
import { selectProject } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { authorize } from "../domain/authorization.js";
import { failedPrecondition, invalidArgument } from "../domain/errors.js";
import { uniquenessKey } from "../domain/names.js";
import { detailsOfChange, detailsOfCreate } from "../events/details.js";
import { EventType } from "../events/types.js";
import { addMember } from "./add-member.js";
import { commitAs, type Expected } from "./commit-as.js";
import { removeMember } from "./remove-member.js";
import { spanOf } from "../queries/details.js";

export async function createProject(deps: Deps, caller: Caller, input: { name: string }) {
  const organization = await selectOrganization(deps, caller);
  authorize(caller.principal, "project.create", { orgId: organization.id });
  const projectId = deps.ids.next();
  const events = await commitAs(deps, caller, {
    writes: [
      {
        kind: "project.insert",
        row: { id: projectId, instanceId: caller.principal.instanceId, orgId: organization.id, name: input.name, nameKey: uniquenessKey(input.name), state: "active" },
      },
    ],
    events: [{ aggregateType: "project", aggregateId: projectId, type: EventType.projectAdded, payload: { name: input.name }, resourceOwner: organization.id }],
  });
  return { projectId, details: detailsOfCreate(events) };
}

export async function addProjectRole(deps: Deps, caller: Caller, input: { projectId: string; roleKey: string; displayName: string }) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.role.write");
  const span = await spanOf(deps.store, "project", project.id);
  const events = await commitAs(deps, caller, {
    writes: [{ kind: "projectRole.insert", row: { projectId: project.id, roleKey: input.roleKey, displayName: input.displayName } }],
    events: [
      {
        aggregateType: "project",
        aggregateId: project.id,
        type: EventType.projectRoleAdded,
        payload: { roleKey: input.roleKey, displayName: input.displayName },
        resourceOwner: organization.id,
      },
    ],
  });
  return { details: detailsOfChange(events, span.first) };
}

export async function addProjectMember(deps: Deps, caller: Caller, input: { projectId: string; userId: string; roles: string[] }) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.member.write");
  const target = { level: "project" as const, scopeId: project.id, ownerOrgId: organization.id, projectId: project.id, eventType: EventType.projectMemberAdded };
  return { details: await addMember(deps, caller, target, input.userId, input.roles) };
}

/** Removes a user's project membership (all its roles), with the privilege ceiling of removeMember. */
export async function removeProjectMember(deps: Deps, caller: Caller, input: { projectId: string; userId: string } & Expected) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.member.write");
  const target = { level: "project" as const, scopeId: project.id, ownerOrgId: organization.id, projectId: project.id, eventType: EventType.projectMemberRemoved };
  return { details: await removeMember(deps, caller, target, input.userId, input) };
}

/** Grants the project to another organization with a subset of the project's role keys. */
export async function createProjectGrant(deps: Deps, caller: Caller, input: { projectId: string; grantedOrganizationId: string; roleKeys: string[] }) {
  const { organization, project } = await selectProject(deps, caller, input.projectId, "project.grant.write");
  if (input.grantedOrganizationId === organization.id) {
    throw invalidArgument("project.grant.own_organization", "a project cannot be granted to its own organization", [
      { field: "granted_organization_id", description: "must be another organization", rule: "project.grant.own_organization" },
    ]);
  }
  const granted = await deps.store.findOrganizationById(input.grantedOrganizationId);
  // (A database holds one instance, so every organization found is the caller's instance's: a guard, whose `false` mutant
  // survives.)
  if (!granted || granted.instanceId !== caller.principal.instanceId) {
    throw failedPrecondition("organization.not_found", "the granted organization does not exist", { organizationId: input.grantedOrganizationId });
  }
  const defined = new Set((await deps.store.listProjectRoles(project.id)).map((role) => role.roleKey));
  const unknown = input.roleKeys.filter((key) => !defined.has(key));
  if (unknown.length > 0) {
    throw failedPrecondition("project.role.not_found", `the project has no role ${unknown.join(", ")}`, { roleKeys: unknown.join(",") });
  }
  const grantId = deps.ids.next();
  const roleKeys = [...new Set(input.roleKeys)];
  const events = await commitAs(deps, caller, {
    writes: [{ kind: "projectGrant.insert", row: { id: grantId, projectId: project.id, grantedOrgId: granted.id, roleKeys } }],
    events: [
      {
        aggregateType: "project.grant",
        aggregateId: grantId,
        type: EventType.projectGrantAdded,
        payload: { projectId: project.id, grantedOrganizationId: granted.id, roleKeys },
        resourceOwner: organization.id,
      },
    ],
  });
  return { grantId, details: detailsOfCreate(events) };
}
