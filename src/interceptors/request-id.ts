import { randomUUID } from "node:crypto";

/** Keeps a caller's `x-request-id` when it is a plain token (so traces join up), else makes one. */
export function acceptedRequestId(header: string | string[] | undefined): string {
  return typeof header === "string" && /^[A-Za-z0-9._-]{1,64}$/.test(header) ? header : randomUUID();
}
