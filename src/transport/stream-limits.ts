import type { Interceptor } from "@connectrpc/connect";
import { DomainError } from "../domain/errors.js";
import type { AnyRequest, Next } from "../interceptors/next.js";
import { peerAddressKey } from "./peer.js";

export interface StreamLimits {
  /** Server-streaming and bidi calls open at once, server-wide. */
  maxStreamingCalls: number;
  /** Of those, open at once from one remote address: one client cannot take every slot. */
  maxStreamingCallsPerPeer: number;
  /** After this long a streaming call ends with status OK. */
  streamMaxLifetimeMs: number;
}

const LIFETIME_OVER = Symbol("lifetime over");

/**
 * Relays a stream's messages until the lifetime signal fires, then ends it normally. The
 * implementation sees the same signal (its context's), so one that waits on it (Health.Watch)
 * stops too; one that waits on something else is left to finish when its request ends.
 */
async function* untilLifetimeOver<T>(messages: AsyncIterable<T>, lifetime: AbortSignal, release: () => void): AsyncIterable<T> {
  const iterator = messages[Symbol.asyncIterator]();
  try {
    for (;;) {
      if (lifetime.aborted) return;
      // A promise and a listener per message, dropped after it: a race against one promise for the whole stream would
      // leave a reaction on it per message, each holding that message, for as long as the stream lasts (a bulk import
      // sends thousands of answers of a thousand results each).
      let over = () => {};
      const lifetimeOver = new Promise<typeof LIFETIME_OVER>((resolve) => (over = () => resolve(LIFETIME_OVER)));
      lifetime.addEventListener("abort", over);
      let result: IteratorResult<T> | typeof LIFETIME_OVER;
      try {
        result = await Promise.race([iterator.next(), lifetimeOver]);
      } finally {
        lifetime.removeEventListener("abort", over);
      }
      if (result === LIFETIME_OVER || result.done) return;
      yield result.value;
    }
  } finally {
    release();
    void iterator.return?.()?.catch(() => undefined);
  }
}

/**
 * Long-lived calls (Health.Watch, reflection) hold a stream, a socket and a listener each for as
 * long as the client likes, without a token. They are capped per remote address (beyond it:
 * resource_exhausted `stream.peer_limit_reached`), so one client cannot lock everyone else out,
 * and server-wide (`stream.limit_reached`), and end after a maximum lifetime; clients that want
 * to go on watching call again, as gRPC health clients do.
 */
export function createStreamLimitInterceptor(limits: StreamLimits): Interceptor {
  let open = 0;
  const openByPeer = new Map<string, number>();
  // Not an async function for the calls that stream no answers (nearly every call): no promise of its own in between.
  return (next) => (req) => {
    const kind = req.method.methodKind;
    return kind !== "server_streaming" && kind !== "bidi_streaming" ? next(req) : limited(next, req);
  };

  async function limited(next: Next, req: AnyRequest) {
    const peer = req.contextValues.get(peerAddressKey);
    const peerOpen = openByPeer.get(peer) ?? 0;
    if (peerOpen >= limits.maxStreamingCallsPerPeer) {
      throw new DomainError("resource_exhausted", "stream.peer_limit_reached", `at most ${limits.maxStreamingCallsPerPeer} streaming calls may be open at once from one address; try again later`, {
        limit: String(limits.maxStreamingCallsPerPeer),
      });
    }
    if (open >= limits.maxStreamingCalls) {
      throw new DomainError("resource_exhausted", "stream.limit_reached", `at most ${limits.maxStreamingCalls} streaming calls may be open at once; try again later`, {
        limit: String(limits.maxStreamingCalls),
      });
    }
    open++;
    openByPeer.set(peer, peerOpen + 1);
    const lifetime = new AbortController();
    const timer = setTimeout(() => lifetime.abort(), limits.streamMaxLifetimeMs);
    timer.unref();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      open--;
      const left = (openByPeer.get(peer) ?? 1) - 1;
      // No entry outlives a peer's last call: the map holds only addresses with calls open.
      if (left > 0) openByPeer.set(peer, left);
      else openByPeer.delete(peer);
      clearTimeout(timer);
    };
    // The call's signal fires when the call ends for any reason, also when the client went away
    // before a message was read: the slot never outlives the call.
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal fires "abort" once, and release() is idempotent anyway
    req.signal.addEventListener("abort", release, { once: true });
    if (req.signal.aborted) release();
    try {
      const res = await next({ ...req, signal: AbortSignal.any([req.signal, lifetime.signal]) });
      if (!res.stream) {
        release();
        return res;
      }
      return { ...res, message: untilLifetimeOver(res.message, lifetime.signal, release) };
    } catch (error) {
      release();
      throw error;
    }
  }
}
