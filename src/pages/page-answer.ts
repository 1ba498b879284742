import type { PageContent } from "./html.js";

/** What a page handler answers: the status, the page, and extra headers (Retry-After, Allow). */
export interface PageAnswer {
  status: number;
  page: PageContent;
  headers?: Record<string, string>;
}

/** A page's form as the page renders it: where it posts and the hidden fields that name the link. */
export interface FormTarget {
  /** The form's action, relative to the page (`verification`, `init`): the post goes to the path without the query. */
  action: string;
  userId: string;
  orgId: string;
  token: string;
}
