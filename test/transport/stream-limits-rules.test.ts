import { createContextValues, type Interceptor } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { peerAddressKey } from "../../src/transport/peer.js";
import { createStreamLimitInterceptor } from "../../src/transport/stream-limits.js";

// stream-limits.ts: streaming calls are capped server-wide and per remote address, and "the slot never outlives
// the call" — also a call that fails before it answers, or that is answered without a stream. Driven in this
// process with the interceptor's own contract (next → response), a call whose signal never fires on its own.
type Next = Parameters<Interceptor>[0];
type Request = Parameters<ReturnType<Interceptor>>[0];

function streamingCall(peer: string): Request {
  return {
    method: { methodKind: "server_streaming" },
    contextValues: createContextValues().set(peerAddressKey, peer),
    signal: new AbortController().signal,
  } as unknown as Request;
}

async function* oneMessage() {
  yield { n: 1 };
}

const limits = { maxStreamingCalls: 1, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 60_000 };

describe("a streaming call's slot is freed however the call ends", () => {
  it("a call whose handler throws: the error reaches the caller and the slot is free for the next call", async () => {
    const failure = new DomainError("unavailable", "test.failed", "the handler failed");
    const failing = createStreamLimitInterceptor(limits)((async () => {
      throw failure;
    }) as unknown as Next);
    await expect(failing(streamingCall("10.0.0.1"))).rejects.toBe(failure);
    await expect(failing(streamingCall("10.0.0.1"))).rejects.toBe(failure);
  });

  it("a call answered without a stream: the answer is handed on as it is, and the slot is free again", async () => {
    const answer = { stream: false, message: { n: 1 } };
    const unary = createStreamLimitInterceptor(limits)((async () => answer) as unknown as Next);
    expect(await unary(streamingCall("10.0.0.1"))).toBe(answer);
    expect(await unary(streamingCall("10.0.0.2"))).toBe(answer);
    expect(await unary(streamingCall("10.0.0.1"))).toBe(answer);
  });

  it("a stream read to its end frees its slot; while it is open, the next call is refused", async () => {
    const streaming = createStreamLimitInterceptor(limits)((async () => ({ stream: true, message: oneMessage() })) as unknown as Next);
    const open = (await streaming(streamingCall("10.0.0.1"))) as unknown as { message: AsyncIterable<unknown> };
    await expect(streaming(streamingCall("10.0.0.2"))).rejects.toMatchObject({ reason: "stream.limit_reached" });
    const received: unknown[] = [];
    for await (const message of open.message) received.push(message);
    expect(received).toEqual([{ n: 1 }]);
    expect(await streaming(streamingCall("10.0.0.2"))).toMatchObject({ stream: true });
  });
});
