import type { Store } from "../store.js";
import { storeUnavailable } from "../db-errors.js";
import { isConnectionFailure } from "./pg-errors.js";

/**
 * The store with every call's connection failure answered as `store.unavailable` (a DomainError, so the client gets
 * `unavailable` with its reason, and the log no drizzle wrapper, whose message carries the statement's parameters).
 * Commits map their errors themselves (pg-commits.ts); this covers the reads, which run straight on the pool — the
 * database going away mid-service must not turn every read into `internal`. Other errors pass unchanged: they are bugs.
 */
export function answerUnavailableOnConnectionFailure(store: Store): Store {
  const mapped = {} as Record<string, unknown>;
  for (const [name, member] of Object.entries(store)) {
    mapped[name] =
      typeof member === "function"
        ? (...args: unknown[]) => {
            const result: unknown = member.apply(store, args);
            return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(isConnectionFailure(error) ? storeUnavailable() : error)) : result;
          }
        : member;
  }
  return mapped as unknown as Store;
}
