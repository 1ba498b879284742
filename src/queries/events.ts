import { selectOrganization } from "../access/select-organization.js";
import type { Caller, Deps } from "../context.js";
import { authorize, canInstanceWide } from "../domain/authorization.js";
import { invalidArgument } from "../domain/errors.js";
import type { StoredEvent } from "../events/event.js";

export interface ListEventsInput {
  aggregateType: string;
  aggregateId: string;
  fromSequence: number;
  pageSize: number;
  pageToken: string;
}

const DEFAULT_PAGE_SIZE = 100;

/** Page tokens are opaque to callers; inside they carry the last sequence returned. */
export function encodeSequenceToken(sequence: number): string {
  return Buffer.from(`seq:${sequence}`).toString("base64url");
}

export function decodeSequenceToken(token: string): number | undefined {
  if (!token) return undefined;
  const match = /^seq:(\d{1,15})$/.exec(Buffer.from(token, "base64url").toString("utf8"));
  if (!match?.[1]) {
    throw invalidArgument("page_token.invalid", "the page token is not one this server issued", [
      { field: "page_token", description: "not a page token of this list", rule: "page_token.invalid" },
    ]);
  }
  return Number(match[1]);
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
  const after = decodeSequenceToken(input.pageToken);
  const limit = input.pageSize || DEFAULT_PAGE_SIZE;
  const [events, total] = await Promise.all([
    deps.store.listEvents({ ...filter, ...(after !== undefined ? { afterSequence: after } : {}), limit: limit + 1 }),
    deps.store.countEvents(filter),
  ]);
  const page: StoredEvent[] = events.slice(0, limit);
  const last = page.at(-1);
  const nextPageToken = events.length > limit && last ? encodeSequenceToken(last.sequence) : "";
  return { events: page, total, nextPageToken };
}
