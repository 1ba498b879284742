import { requireInstancePermission } from "../access/require-instance-permission.js";
import type { Caller, Deps } from "../context.js";
import { DomainError, failedPrecondition, notFound } from "../domain/errors.js";
import { detailsOfChange } from "../events/details.js";
import { EventType } from "../events/types.js";
import type { OrganizationRow } from "../store/rows.js";
import { commitAs, type Expected, expectationOf } from "./commit-as.js";
import { spanOf } from "../queries/details.js";

export type OrganizationStateChange = "deactivate" | "reactivate";

const wanted: Record<OrganizationStateChange, OrganizationRow["state"]> = { deactivate: "inactive", reactivate: "active" };
const events: Record<OrganizationStateChange, string> = { deactivate: EventType.orgDeactivated, reactivate: EventType.orgReactivated };

/**
 * Deactivates or reactivates an organization. Nothing is deleted: authentication refuses the tokens of
 * an inactive organization's users and selection refuses it to everyone without an instance role, so
 * reactivating gives everything back as it was. An instance decision (`iam.write`): it shuts out every
 * user of the organization, whatever they hold. The write is conditional: of two concurrent identical
 * calls one wins and the other gets the failed_precondition a later call would.
 */
export async function changeOrganizationState(deps: Deps, caller: Caller, organizationId: string, change: OrganizationStateChange, request: Expected = {}) {
  requireInstancePermission(caller, "iam.write");
  const organization = await deps.store.findOrganizationById(organizationId);
  if (!organization || organization.instanceId !== caller.principal.instanceId) throw organizationNotFound(organizationId);
  if (change === "deactivate") await refuseProtected(deps, caller, organization);
  requireChange(organization, change);
  const span = await spanOf(deps.store, "org", organization.id);
  try {
    const stored = await commitAs(deps, caller, {
      expect: expectationOf("org", organization.id, request),
      writes: [{ kind: "organization.setState", id: organization.id, state: wanted[change] }],
      events: [{ aggregateType: "org", aggregateId: organization.id, type: events[change], payload: {}, resourceOwner: organization.id }],
    });
    return { details: detailsOfChange(stored, span.first) };
  } catch (error) {
    if (!(error instanceof DomainError && error.reason === "store.condition_failed")) throw error;
    const now = await deps.store.findOrganizationById(organization.id);
    // Stryker disable next-line ConditionalExpression: no write deletes an organization, so the re-read always finds it (kept as a guard for a future RemoveOrganization)
    if (!now) throw organizationNotFound(organization.id);
    requireChange(now, change);
    throw error;
  }
}

/**
 * The default organization holds the bootstrap admin and is where new instance administrators land;
 * the caller's own organization would shut the caller out (and with it, possibly the last IAM_OWNER
 * able to reactivate anything). Neither may be deactivated.
 */
async function refuseProtected(deps: Deps, caller: Caller, organization: OrganizationRow): Promise<void> {
  const instance = await deps.store.getInstance();
  // Stryker disable next-line OptionalChaining: the instance exists from bootstrap on (a server serves only a bootstrapped database); the chain only satisfies the type
  if (instance?.defaultOrgId === organization.id) {
    throw failedPrecondition("organization.default", "the instance's default organization cannot be deactivated");
  }
  if (caller.principal.orgId === organization.id) {
    throw failedPrecondition("organization.self", "the caller's own organization cannot be deactivated");
  }
}

function requireChange(organization: OrganizationRow, change: OrganizationStateChange): void {
  if (change === "deactivate" && organization.state === "inactive") {
    throw failedPrecondition("organization.already_inactive", "the organization is inactive already");
  }
  if (change === "reactivate" && organization.state === "active") {
    throw failedPrecondition("organization.not_inactive", "the organization is not inactive");
  }
}

const organizationNotFound = (organizationId: string) => notFound("organization.not_found", "the organization does not exist", { organizationId });
