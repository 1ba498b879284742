import { invalidArgument } from "../domain/errors.js";

const DEFAULT_PAGE_SIZE = 100;

/**
 * Page tokens are opaque to callers; inside they carry the position (sequence or insertion order)
 * of the last item returned, so the next page starts strictly after it.
 */
function encodePosition(position: number): string {
  return Buffer.from(`seq:${position}`).toString("base64url");
}

/** The position a page token stands for; undefined for the first page. Forged tokens are invalid_argument. */
function positionAfter(token: string): number | undefined {
  if (!token) return undefined;
  const match = /^seq:(\d{1,15})$/.exec(Buffer.from(token, "base64url").toString("utf8"));
  if (!match?.[1]) {
    throw invalidArgument("page_token.invalid", "the page token is not one this server issued", [
      { field: "page_token", description: "not a page token of this list", rule: "page_token.invalid" },
    ]);
  }
  return Number(match[1]);
}

/** How many rows to fetch for a page: one more than it shows, to know whether a next page exists. */
function pageLimit(pageSize: number): { limit: number; fetch: number } {
  const limit = pageSize || DEFAULT_PAGE_SIZE;
  return { limit, fetch: limit + 1 };
}

/** Cuts the fetched rows to the page and makes the token of the next page ("" when this is the last). */
function cutPage<T>(rows: T[], limit: number, positionOf: (row: T) => number): { page: T[]; nextPageToken: string } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  // Stryker disable next-line ConditionalExpression: with more rows than the limit (at least 1), the page has a last row; the test only narrows for TypeScript
  return { page, nextPageToken: rows.length > limit && last !== undefined ? encodePosition(positionOf(last)) : "" };
}

export interface PageRequest {
  pageSize: number;
  pageToken: string;
}

/** Where a page starts (after which position; absent for the first page) and how many rows to fetch for it. */
export interface PageWindow {
  afterPosition?: number;
  limit: number;
}

/**
 * One page of a list and the total it is part of. The token is checked before anything is read;
 * `listPage` fetches the rows of the window (with their positions), `count` the whole list.
 */
export async function readPage<Row>(
  request: PageRequest,
  listPage: (window: PageWindow) => Promise<{ row: Row; position: number }[]>,
  count: () => Promise<number>,
): Promise<{ rows: Row[]; total: number; nextPageToken: string }> {
  const after = positionAfter(request.pageToken);
  const { limit, fetch } = pageLimit(request.pageSize);
  const [fetched, total] = await Promise.all([listPage({ afterPosition: after, limit: fetch }), count()]);
  const { page, nextPageToken } = cutPage(fetched, limit, (row) => row.position);
  return { rows: page.map(({ row }) => row), total, nextPageToken };
}
