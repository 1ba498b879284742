import type { Deps } from "../context.js";
import type { MembershipRow } from "../store/rows.js";
import { withDetails } from "./details.js";
import { type PageRequest, readPage } from "./paging.js";

/**
 * One page of the members of a scope in the order they were added, with the total and each
 * membership's details. Shared by every List…Members of a level whose permission is checked already.
 */
export async function listMembersOfScope(deps: Deps, level: MembershipRow["level"], scopeId: string, input: PageRequest) {
  const { rows, total, nextPageToken } = await readPage(
    input,
    (window) => deps.store.listMembershipsOfScopePage({ level, scopeId, ...window }),
    () => deps.store.countMembershipsOfScope(level, scopeId),
  );
  return { members: await withDetails(deps.store, "member", rows), total, nextPageToken };
}
