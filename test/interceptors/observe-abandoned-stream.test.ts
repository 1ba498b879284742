import { createContextValues, type StreamRequest, type StreamResponse } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { requestIdKey } from "../../src/interceptors/context-keys.js";
import { createObserveInterceptor } from "../../src/interceptors/observe.js";
import { createLogger } from "../../src/support/logger.js";
import { createMetrics } from "../../src/support/metrics.js";

// A streaming call is recorded once, when its stream ends, with the code it ended with (src/interceptors/observe.ts).
// A stream whose reader stops taking its answers — connect stops reading when it cannot send one, so the iteration is
// left by return() — did not complete: its line must not say ok, even when nobody aborted the call's signal. Over a
// real protocol a reader stops only when the client went away, which aborts the signal too; so this is said here, to
// the interceptor, with a stream left by its reader and a signal that stays open.

function observed() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) });
  const interceptor = createObserveInterceptor(logger, createMetrics());
  const request = {
    stream: true,
    service: Health,
    method: Health.method.watch,
    header: new Headers({ "content-type": "application/grpc" }),
    contextValues: createContextValues().set(requestIdKey, "abandoned-1"),
    signal: new AbortController().signal,
  } as unknown as StreamRequest;
  const answers = async function* () {
    yield {};
    yield {};
  };
  const response = { stream: true, header: new Headers(), trailer: new Headers(), message: answers() } as unknown as StreamResponse;
  const call = interceptor(async () => response)(request) as Promise<StreamResponse>;
  return { lines, call };
}

describe("a streaming call's log line", () => {
  it("says ok once every answer was read", async () => {
    const { lines, call } = observed();
    for await (const _ of (await call).message) void _;
    expect(lines.filter((line) => line.msg === "rpc")).toMatchObject([{ requestId: "abandoned-1", code: "ok" }]);
  });

  it("does not say ok when the reader left the stream before its end, though the call's signal was never aborted", async () => {
    const { lines, call } = observed();
    for await (const _ of (await call).message) break;
    const rpcLines = lines.filter((line) => line.msg === "rpc");
    expect(rpcLines).toHaveLength(1);
    expect(rpcLines[0]).toMatchObject({ requestId: "abandoned-1", code: "canceled" });
  });
});
