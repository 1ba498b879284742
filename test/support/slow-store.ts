import type { Caller } from "../../src/context.js";
import type { Store } from "../../src/store/store.js";

/**
 * The Store contract is async: on a networked backend two requests both read before either commits.
 * This wraps the real store of a running server so every read answers a little later (what a round
 * trip does), which makes that interleaving happen; commits are untouched.
 */
export function withSlowReads(store: Store, delayMs: () => number = () => 5): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function" || property === "commit") return value;
      return async (...args: unknown[]) => {
        const result = await (value as (...a: unknown[]) => unknown).apply(target, args);
        // Read now, answer later: what a network round trip does.
        await new Promise((resolve) => setTimeout(resolve, delayMs()));
        return result;
      };
    },
  });
}

export const ownerCaller = (userId: string, orgId: string, instanceId: string): Caller => ({
  principal: { userId, orgId, instanceId, tokenId: "race", memberships: [{ level: "instance", scopeId: instanceId, ownerOrgId: instanceId, roles: ["IAM_OWNER"] }] },
  requestedOrgId: undefined,
});
