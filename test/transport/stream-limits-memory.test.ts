import { createContextValues, type Interceptor } from "@connectrpc/connect";
import v8 from "node:v8";
import vm from "node:vm";
import { expect, it } from "vitest";
import { peerAddressKey } from "../../src/transport/peer.js";
import { createStreamLimitInterceptor } from "../../src/transport/stream-limits.js";

// A streaming call relays its messages through the stream-limit interceptor for as long as the stream lasts (a bulk
// import: thousands of answers of a thousand results each). What it relayed must not stay in memory until the stream
// ends: a message the client has taken is garbage at once.
type Next = Parameters<Interceptor>[0];
type Request = Parameters<ReturnType<Interceptor>>[0];

v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc") as () => void;

it("keeps no message it relayed while the stream goes on", async () => {
  const sent: WeakRef<object>[] = [];
  const next = (async () => {
    async function* messages() {
      for (let i = 0; i < 200; i++) {
        const message = { results: new Array(2000).fill(i) };
        sent.push(new WeakRef(message));
        yield message;
      }
      // The stream stays open.
      await new Promise(() => {});
    }
    return { stream: true, message: messages() };
  }) as unknown as Next;
  const request = { method: { methodKind: "bidi_streaming" }, contextValues: createContextValues().set(peerAddressKey, "peer"), signal: new AbortController().signal } as unknown as Request;
  const interceptor = createStreamLimitInterceptor({ maxStreamingCalls: 10, maxStreamingCallsPerPeer: 10, streamMaxLifetimeMs: 600_000 });
  const response = (await interceptor(next)(request)) as unknown as { message: AsyncIterable<object> };
  const iterator = response.message[Symbol.asyncIterator]();
  for (let i = 0; i < 200; i++) await iterator.next();
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  const kept = sent.filter((ref) => ref.deref() !== undefined).length;
  // The last one or two may still be referenced by the generator; not the 200.
  expect(kept).toBeLessThanOrEqual(2);
});
