import type { Deps } from "../context.js";
import type { MembershipRow } from "../store/rows.js";
import { readDetails } from "./details.js";
import { cutPage, pageLimit, positionAfter } from "./paging.js";

/**
 * One page of the members of a scope in the order they were added, with the total and each
 * membership's details. Shared by every List…Members of a level whose permission is checked already.
 */
export async function listMembersOfScope(deps: Deps, level: MembershipRow["level"], scopeId: string, input: { pageSize: number; pageToken: string }) {
  const after = positionAfter(input.pageToken);
  const { limit, fetch } = pageLimit(input.pageSize);
  const [rows, total] = await Promise.all([
    deps.store.listMembershipsOfScopePage({ level, scopeId, ...(after !== undefined ? { afterPosition: after } : {}), limit: fetch }),
    deps.store.countMembershipsOfScope(level, scopeId),
  ]);
  const { page, nextPageToken } = cutPage(rows, limit, (row) => row.position);
  const members = await Promise.all(page.map(async ({ row }) => ({ membership: row, details: await readDetails(deps.store, "member", row.id) })));
  return { members, total, nextPageToken };
}
