import type { Interceptor } from "@connectrpc/connect";
import type { Store } from "../store/store.js";
import { answerOf } from "./next.js";

/**
 * Every answer — a success, a conflict, a read — waits until the state it reflects is durable (group commit: a
 * commit is visible before its disk sync is done, src/store/sqlite/group-commit.ts). Free when nothing waits for a sync.
 * Inside the error mapping, so a failed sync reaches the caller as `unavailable`. For a streaming answer it waits
 * once, before the first message: no streaming RPC reads the store today (Health.Watch, reflection); one that
 * does must wait before each message.
 */
export function createDurabilityInterceptor(store: Pick<Store, "durable">): Interceptor {
  // Promise callbacks rather than an async function: this runs for every call, the no-op included.
  return (next) => (req) =>
    answerOf(next, req).then(
      (res) => store.durable().then(() => res),
      (error: unknown) =>
        store.durable().then(() => {
          throw error;
        }),
    );
}
