import { Code, ConnectError } from "@connectrpc/connect";
import http from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { http1Request, jsonErrorReason } from "../fuzz/wire.js";
import { eventually } from "../support/eventually.js";
import { useTestServer } from "../support/server.js";

// node-adapter.ts: "a failed response write is a warning, not a console.error with a stack for anyone to trigger"
// — one warning naming the request id, the procedure, the code and the cause (cut to 200 characters); "the client
// went away or reset the stream: nothing to answer, nothing the server did wrong" — no warning for an abort or a
// cancel. And the client is never left hanging: nothing sent yet → the SPEC internal body with its request id;
// half an answer sent → the response is cut off.
// The faults are injected at http.ServerResponse (the only way to make a socket write fail on cue), for one
// request id only; everything else goes through untouched.
const t = useTestServer();
afterEach(() => {
  vi.restoreAllMocks();
});

const CHECK = "/grpc.health.v1.Health/Check";
let sequence = 0;
const newRequestId = (what: string) => `adapter-${what}-${Date.now()}-${++sequence}`;

/** Calls `fault` instead of `method` the first time a response to `requestId` calls it. */
function failOnce<M extends "writeHead" | "write">(method: M, requestId: string, fault: (args: unknown[]) => unknown): void {
  const original = http.ServerResponse.prototype[method] as (...args: unknown[]) => unknown;
  let failed = false;
  vi.spyOn(http.ServerResponse.prototype, method).mockImplementation(function (this: http.ServerResponse, ...args: unknown[]) {
    if (!failed && this.getHeader("x-request-id") === requestId) {
      failed = true;
      return fault(args);
    }
    return original.apply(this, args);
  } as never);
}

/** A Connect JSON Health.Check over its own HTTP/1.1 connection. */
function check(requestId: string, timeoutMs = 5_000) {
  return http1Request(
    t.server.url,
    new http.Agent({ keepAlive: false }),
    { path: CHECK, headers: { "content-type": "application/json", "x-request-id": requestId }, body: "{}" },
    timeoutMs,
  );
}

const entriesOf = (requestId: string) => t.server.logs.parsed().filter((entry) => entry.requestId === requestId);

describe("a response the server fails to write, before anything was sent", () => {
  it("the client gets the SPEC internal body with its request id; one warning names the request, procedure, code and cause (cut to 200 characters)", async () => {
    const consoleError = vi.spyOn(console, "error");
    const requestId = newRequestId("head");
    const cause = `the head could not be written ${"x".repeat(300)}`;
    failOnce("writeHead", requestId, () => {
      throw Object.assign(new Error(cause), { code: "ERR_TEST_FAULT" });
    });

    const response = await check(requestId);

    expect(response.status).toBe(500);
    expect(response.headers["content-type"]).toBe("application/json");
    expect(response.headers["x-request-id"]).toBe(requestId);
    const body = JSON.parse(response.body.toString("utf8")) as { code: number; message: string };
    expect(body.code).toBe(Code.Internal);
    expect(body.message).toContain(requestId);
    expect(jsonErrorReason(response.body)).toBe("internal");
    const warning = await eventually(() => entriesOf(requestId).find((entry) => entry.msg === "response not delivered"), { what: "the warning", timeoutMs: 5_000 });
    expect(warning).toMatchObject({ level: 40, requestId, procedure: CHECK, code: "Internal", message: cause.slice(0, 200) });
    expect(entriesOf(requestId).filter((entry) => (entry.level as number) >= 40)).toHaveLength(1);
    expect(consoleError).not.toHaveBeenCalled();
  });
});

describe("a response that fails half-way", () => {
  it("is cut off at once (the client sees a broken answer, not a hang) and is one warning", async () => {
    const consoleError = vi.spyOn(console, "error");
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const requestId = newRequestId("body");
      failOnce("write", requestId, (args) => {
        const callback = args.find((arg) => typeof arg === "function") as ((error: Error) => void) | undefined;
        process.nextTick(() => callback?.(Object.assign(new Error("the body could not be written"), { code: "ERR_TEST_FAULT" })));
        return false;
      });

      const started = Date.now();
      const failure = await check(requestId, 4_000).then(
        () => new Error("an answer arrived"),
        (error: Error) => error,
      );

      expect(failure.message).not.toMatch(/no answer within/);
      expect(failure.message).toMatch(/socket hang up|ECONNRESET|aborted/);
      expect(Date.now() - started).toBeLessThan(3_000);
      const warning = await eventually(() => entriesOf(requestId).find((entry) => entry.msg === "response not delivered"), { what: "the warning", timeoutMs: 5_000 });
      expect(warning).toMatchObject({ level: 40, requestId, procedure: CHECK, code: "Internal", message: "the body could not be written" });
      expect(unhandled).toEqual([]);
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});

describe("a delivery that fails because the client went away or canceled is no warning", () => {
  it.each([
    ["a cancel", () => new ConnectError("the client canceled", Code.Canceled)],
    ["a reset connection", () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })],
  ])("%s", async (_what, fault) => {
    const consoleError = vi.spyOn(console, "error");
    const requestId = newRequestId("gone");
    failOnce("writeHead", requestId, () => {
      throw fault();
    });

    const response = await check(requestId);

    // Nothing was sent yet: the answer is still the internal body, which a client that is gone never reads.
    expect(response.status).toBe(500);
    const next = await check(newRequestId("next"));
    expect(next.status).toBe(200);
    expect(entriesOf(requestId).filter((entry) => (entry.level as number) >= 40)).toEqual([]);
    expect(consoleError).not.toHaveBeenCalled();
  });
});
