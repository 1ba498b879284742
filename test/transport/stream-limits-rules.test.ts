import { createContextValues, type Interceptor } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { peerAddressKey } from "../../src/transport/peer.js";
import { createStreamLimitInterceptor } from "../../src/transport/stream-limits.js";
import { eventually } from "../support/eventually.js";

// stream-limits.ts: streaming calls are capped server-wide and per remote address, and "the slot never outlives
// the call" — also a call that fails before it answers, or that is answered without a stream. Driven in this
// process with the interceptor's own contract (next → response), a call whose signal never fires on its own.
type Next = Parameters<Interceptor>[0];
type Request = Parameters<ReturnType<Interceptor>>[0];

function streamingCall(peer: string, signal = new AbortController().signal, methodKind = "server_streaming"): Request {
  return {
    method: { methodKind },
    contextValues: createContextValues().set(peerAddressKey, peer),
    signal,
  } as unknown as Request;
}

/** A stream that sends one message and then waits until its call's signal fires (as Health.Watch does). */
function watchLike(seen: AbortSignal[] = []): Next {
  return (async (req: Request) => {
    seen.push(req.signal);
    async function* messages() {
      yield { status: "SERVING" };
      await new Promise((resolve) => req.signal.addEventListener("abort", resolve, { once: true }));
    }
    return { stream: true, message: messages() };
  }) as unknown as Next;
}

type Opened = { message: AsyncIterable<unknown> };
const refusal = (error: unknown) => error as DomainError;

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

describe("the caps: per remote address, and server-wide", () => {
  it("beyond a peer's cap: resource_exhausted stream.peer_limit_reached with the limit; another peer still gets a slot", async () => {
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 10, maxStreamingCallsPerPeer: 2, streamMaxLifetimeMs: 60_000 })(watchLike());
    await call(streamingCall("10.0.0.1"));
    await call(streamingCall("10.0.0.1"));
    const error = refusal(await call(streamingCall("10.0.0.1")).catch((e: unknown) => e));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ kind: "resource_exhausted", reason: "stream.peer_limit_reached", metadata: { limit: "2" } });
    expect(error.message).toBe("at most 2 streaming calls may be open at once from one address; try again later");
    expect(await call(streamingCall("10.0.0.2"))).toMatchObject({ stream: true });
  });

  it("beyond the server-wide cap: resource_exhausted stream.limit_reached with the limit, whatever the peer", async () => {
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 2, maxStreamingCallsPerPeer: 5, streamMaxLifetimeMs: 60_000 })(watchLike());
    await call(streamingCall("10.0.0.1"));
    await call(streamingCall("10.0.0.2"));
    const error = refusal(await call(streamingCall("10.0.0.3")).catch((e: unknown) => e));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ kind: "resource_exhausted", reason: "stream.limit_reached", metadata: { limit: "2" } });
    expect(error.message).toBe("at most 2 streaming calls may be open at once; try again later");
  });

  it("unary and client-streaming calls are not counted", async () => {
    const answer = { stream: false, message: {} };
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 1, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 60_000 })((async (req: Request) =>
      req.method.methodKind === "server_streaming" ? { stream: true, message: oneMessage() } : answer) as unknown as Next);
    await call(streamingCall("10.0.0.1"));
    expect(await call(streamingCall("10.0.0.1", undefined, "unary"))).toBe(answer);
    expect(await call(streamingCall("10.0.0.1", undefined, "client_streaming"))).toBe(answer);
  });

  it("bidi calls are counted like server-streaming ones", async () => {
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 1, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 60_000 })(watchLike());
    await call(streamingCall("10.0.0.1", undefined, "bidi_streaming"));
    await expect(call(streamingCall("10.0.0.2", undefined, "bidi_streaming"))).rejects.toMatchObject({ reason: "stream.limit_reached" });
  });
});

describe("a slot is given back once, when the call ends", () => {
  it("the client goes away (the call's signal fires) before reading: its slot is free again", async () => {
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 5, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 60_000 })(watchLike());
    const client = new AbortController();
    await call(streamingCall("10.0.0.1", client.signal));
    await expect(call(streamingCall("10.0.0.1"))).rejects.toMatchObject({ reason: "stream.peer_limit_reached" });
    client.abort();
    expect(await call(streamingCall("10.0.0.1"))).toMatchObject({ stream: true });
  });

  it("a call whose client was gone before it started takes no slot", async () => {
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 5, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 60_000 })(watchLike());
    await call(streamingCall("10.0.0.1", AbortSignal.abort()));
    expect(await call(streamingCall("10.0.0.1"))).toMatchObject({ stream: true });
  });

  it("one peer's freed slot is one slot: with two of two open and one ended, one more opens, not two", async () => {
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 10, maxStreamingCallsPerPeer: 2, streamMaxLifetimeMs: 60_000 })(watchLike());
    const first = new AbortController();
    await call(streamingCall("10.0.0.1", first.signal));
    await call(streamingCall("10.0.0.1"));
    first.abort();
    await call(streamingCall("10.0.0.1"));
    await expect(call(streamingCall("10.0.0.1"))).rejects.toMatchObject({ reason: "stream.peer_limit_reached" });
  });

  it("a call that both ends by its lifetime and is then aborted gives back one slot, not two", async () => {
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 2, maxStreamingCallsPerPeer: 5, streamMaxLifetimeMs: 30 })(watchLike());
    const client = new AbortController();
    const opened = (await call(streamingCall("10.0.0.1", client.signal))) as unknown as Opened;
    for await (const _ of opened.message) {
      // until the lifetime ends it
    }
    client.abort();
    await call(streamingCall("10.0.0.2"));
    await call(streamingCall("10.0.0.3"));
    await expect(call(streamingCall("10.0.0.4"))).rejects.toMatchObject({ reason: "stream.limit_reached" });
  });
});

describe("the lifetime: a stream ends normally after it, and the implementation sees the same signal", () => {
  it("a watch that would go on for ever ends (no error) after the lifetime; its signal has fired", async () => {
    const seen: AbortSignal[] = [];
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 1, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 30 })(watchLike(seen));
    const opened = (await call(streamingCall("10.0.0.1"))) as unknown as Opened;
    const received: unknown[] = [];
    for await (const message of opened.message) received.push(message);
    expect(received).toEqual([{ status: "SERVING" }]);
    expect(seen[0]?.aborted).toBe(true);
    expect(await call(streamingCall("10.0.0.1"))).toMatchObject({ stream: true });
  });

  it("a stream first read after its lifetime is over ends at once, without waiting for a message", async () => {
    const seen: AbortSignal[] = [];
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 1, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 1 })(watchLike(seen));
    const opened = (await call(streamingCall("10.0.0.1"))) as unknown as Opened;
    await eventually(() => seen[0]?.aborted, { what: "the lifetime to end", timeoutMs: 5_000 });
    const received: unknown[] = [];
    for await (const message of opened.message) received.push(message);
    expect(received).toEqual([]);
  });

  it("an implementation that keeps sending without looking at the signal is closed too (its finally runs)", async () => {
    let closed = false;
    async function* ticking() {
      try {
        for (let i = 0; ; i++) {
          yield { i };
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      } finally {
        closed = true;
      }
    }
    const call = createStreamLimitInterceptor({ maxStreamingCalls: 1, maxStreamingCallsPerPeer: 1, streamMaxLifetimeMs: 30 })((async () => ({ stream: true, message: ticking() })) as unknown as Next);
    const opened = (await call(streamingCall("10.0.0.1"))) as unknown as Opened;
    let count = 0;
    for await (const _ of opened.message) count++;
    expect(count).toBeGreaterThan(0);
    await eventually(() => closed, { what: "the implementation's stream to be closed", timeoutMs: 5_000 });
  });
});
