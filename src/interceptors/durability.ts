import type { Interceptor } from "@connectrpc/connect";
import type { Store } from "../store/store.js";

/**
 * Every answer — a success, a conflict, a read — waits until the state it reflects is durable (group commit: a
 * commit is visible before its disk sync is done, src/store/sqlite/group-commit.ts). Free when nothing waits for a sync.
 * Inside the error mapping, so a failed sync reaches the caller as `unavailable`. For a streaming answer it waits
 * once, before the first message: no streaming RPC reads the store today (Health.Watch, reflection); one that
 * does must wait before each message.
 */
export function createDurabilityInterceptor(store: Pick<Store, "durable">): Interceptor {
  return (next) => async (req) => {
    let res;
    try {
      res = await next(req);
    } catch (error) {
      await store.durable();
      throw error;
    }
    await store.durable();
    return res;
  };
}
