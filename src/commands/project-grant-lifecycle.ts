import { selectProjectGrant } from "../access/select-project.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, invalidArgument, notFound } from "../domain/errors.js";
import type { NewEvent } from "../events/event.js";
import { detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import type { MembershipRow, ProjectGrantRow } from "../store/rows.js";
import type { RowWrite } from "../store/commit.js";
import { commitAs, detailsOfNoChange, type Expected, expectationOf } from "./commit-as.js";
import { membershipRemoval } from "./remove-member.js";
import { spanOf } from "../queries/details.js";

interface GrantIds extends Expected {
  projectId: string;
  grantId: string;
}

/**
 * The writes and events that remove a grant with its members: each member's removal, then the grant.
 * Shared by RemoveProjectGrant and RemoveProject, which commit them in their own transaction.
 */
export function grantRemoval(grant: ProjectGrantRow, ownerOrgId: string, members: MembershipRow[]): { writes: RowWrite[]; events: NewEvent[] } {
  const target = { level: "project_grant" as const, scopeId: grant.id, ownerOrgId, projectId: grant.projectId, eventType: EventType.projectGrantMemberRemoved };
  const removals = members.map((membership) => membershipRemoval(membership, target));
  return {
    writes: [...removals.map((r) => r.write), { kind: "projectGrant.delete", id: grant.id }],
    events: [
      ...removals.map((r) => r.event),
      {
        aggregateType: "project.grant",
        aggregateId: grant.id,
        type: EventType.projectGrantRemoved,
        payload: { projectId: grant.projectId, grantedOrganizationId: grant.grantedOrgId },
        resourceOwner: ownerOrgId,
      },
    ],
  };
}

/** Commits a grant change; lost races answer as the call after the winner would (not_found when gone). */
async function commitGrantChange(deps: Deps, caller: Caller, grant: ProjectGrantRow, request: Expected, change: { writes: RowWrite[]; events: NewEvent[] }) {
  const span = await spanOf(deps.store, "project.grant", grant.id);
  try {
    return { details: detailsOfChange(await commitAs(deps, caller, { ...change, expect: expectationOf("project.grant", grant.id, request) }), span.first) };
  } catch (error) {
    if (!(error instanceof DomainError && error.reason === "store.condition_failed")) throw error;
    if (!(await deps.store.findProjectGrantById(grant.id))) throw grantNotFound(grant);
    throw error;
  }
}

/**
 * Replaces a grant's role keys; each must be a role of the project (invalid_argument naming each bad
 * one). Grant members hold grant management roles, never project role keys, so no membership changes.
 * The same set again is no change: no event.
 */
export async function updateProjectGrant(deps: Deps, caller: Caller, input: GrantIds & { roleKeys: string[] }) {
  const { organization, project, grant } = await selectProjectGrant(deps, caller, input, "project.grant.write");
  const defined = new Set((await deps.store.listProjectRoles(project.id)).map((role) => role.roleKey));
  const violations = input.roleKeys.flatMap((key, index) =>
    defined.has(key) ? [] : [{ field: `role_keys[${index}]`, description: `the project has no role ${key}`, rule: "project.role.not_found" }],
  );
  if (violations.length > 0) {
    const unknown = input.roleKeys.filter((key) => !defined.has(key));
    throw invalidArgument("project.role.not_found", "role keys must be roles of the project", violations, { roleKeys: unknown.join(",") });
  }
  const roleKeys = [...new Set(input.roleKeys)];
  if (sameSet(roleKeys, grant.roleKeys)) {
    return { details: await detailsOfNoChange(deps, { type: "project.grant", id: grant.id }, expectationOf("project.grant", grant.id, input)) };
  }
  return commitGrantChange(deps, caller, grant, input, {
    writes: [{ kind: "projectGrant.setRoleKeys", id: grant.id, roleKeys }],
    events: [
      {
        aggregateType: "project.grant",
        aggregateId: grant.id,
        type: EventType.projectGrantChanged,
        payload: { roleKeys, removedRoleKeys: grant.roleKeys.filter((key) => !roleKeys.includes(key)) },
        resourceOwner: organization.id,
      },
    ],
  });
}

/** Removes a grant and its members in one transaction, each removal its own event. */
export async function removeProjectGrant(deps: Deps, caller: Caller, input: GrantIds) {
  const { organization, grant } = await selectProjectGrant(deps, caller, input, "project.grant.write");
  const members = await deps.store.listMembershipsOfScope("project_grant", grant.id);
  return commitGrantChange(deps, caller, grant, input, grantRemoval(grant, organization.id, members));
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((key) => b.includes(key));
}

// The same answer (and metadata) as the lookup before the change (src/access/select-project.ts).
const grantNotFound = (grant: ProjectGrantRow) =>
  notFound("project.grant.not_found", "the project grant does not exist", { projectId: grant.projectId, grantId: grant.id });
