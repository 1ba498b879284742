import type { Caller, Deps } from "../context.js";
import type { StoredEvent } from "../events/event.js";
import type { Commit } from "../store/store.js";

/** Commits writes and events on behalf of the caller: their instance, their id as actor, the clock's time. */
export function commitAs(deps: Deps, caller: Caller, change: Pick<Commit, "writes" | "events">, at = deps.clock.now()): Promise<StoredEvent[]> {
  return deps.store.commit({ instanceId: caller.principal.instanceId, actor: caller.principal.userId, at, ...change });
}
