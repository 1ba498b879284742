import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, canInstanceWide } from "../domain/authorization.js";
import { cutPage, pageLimit, positionAfter } from "./paging.js";

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
    ...(input.fromSequence > 0 ? { fromSequence: input.fromSequence } : {}),
  };
  const after = positionAfter(input.pageToken);
  const { limit, fetch } = pageLimit(input.pageSize);
  const [events, total] = await Promise.all([
    deps.store.listEvents({ ...filter, ...(after !== undefined ? { afterSequence: after } : {}), limit: fetch }),
    deps.store.countEvents(filter),
  ]);
  const { page, nextPageToken } = cutPage(events, limit, (event) => event.sequence);
  return { events: page, total, nextPageToken };
}
