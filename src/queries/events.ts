import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, canInstanceWide } from "../domain/authorization.js";
import { readPage } from "./paging.js";

export interface ListEventsInput {
  aggregateType: string;
  aggregateId: string;
  fromSequence: number;
  pageSize: number;
  pageToken: string;
}

/**
 * The audit trail. Instance-wide readers see all events (or one organization's with
 * `x-service-orgid`); organization readers see their organization's only.
 */
export async function listEvents(deps: Deps, caller: Caller, input: ListEventsInput) {
  let resourceOwner: string | undefined;
  if (!canInstanceWide(caller.principal, "events.read") || caller.requestedOrgId !== undefined) {
    const organization = await selectOrganization(deps, caller);
    authorize(caller.principal, "events.read", { orgId: organization.id });
    resourceOwner = organization.id;
  }
  const filter = {
    ...(input.aggregateType ? { aggregateType: input.aggregateType } : {}),
    ...(input.aggregateId ? { aggregateId: input.aggregateId } : {}),
    ...(resourceOwner ? { resourceOwner } : {}),
    // From sequence 0 is from the start: sequences begin at 1.
    fromSequence: input.fromSequence,
  };
  // An event's position in the list is its sequence.
  const { rows, total, nextPageToken } = await readPage(
    input,
    async ({ afterPosition, limit }) => {
      const events = await deps.store.listEvents({ ...filter, afterSequence: afterPosition, limit });
      return events.map((event) => ({ row: event, position: event.sequence }));
    },
    () => deps.store.countEvents(filter),
  );
  return { events: rows, total, nextPageToken };
}
