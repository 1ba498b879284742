import http2 from "node:http2";
import net from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { envelope, http1Request, useWireConnections } from "../fuzz/wire.js";
import { eventually } from "../support/eventually.js";
import { useTestServer } from "../support/server.js";

// node-adapter.ts: "The client went away or reset the stream: nothing to answer, nothing the server did wrong" —
// a response that cannot be delivered because the client hung up is neither a warning nor a console.error with a
// stack (anyone could trigger those at will), and the server goes on serving.
const t = useTestServer();
const wire = useWireConnections(() => t.server);
afterEach(() => {
  vi.restoreAllMocks();
});

/** Starts a Connect Health.Watch over HTTP/1.1 on a raw socket; resolves once the first update arrived. */
async function watchOnRawSocket(requestId: string): Promise<net.Socket> {
  const url = new URL(t.server.url);
  const socket = net.connect({ host: url.hostname, port: Number(url.port) });
  socket.on("error", () => undefined);
  const request = envelope(Buffer.from("{}"));
  socket.write(
    `POST /grpc.health.v1.Health/Watch HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/connect+json\r\nx-request-id: ${requestId}\r\ncontent-length: ${request.byteLength}\r\n\r\n`,
  );
  socket.write(request);
  await new Promise((resolve) => socket.once("data", resolve));
  return socket;
}

describe("a client that hangs up in the middle of a stream", () => {
  it("is no warning and no console.error; the server answers the next call", async () => {
    const consoleError = vi.spyOn(console, "error");
    const requestId = `hang-up-${Date.now()}`;
    const socket = await watchOnRawSocket(requestId);
    socket.destroy();
    const entriesOf = () => t.server.logs.parsed().filter((entry) => entry.requestId === requestId);
    // The call ends when the server sees the hang-up (its log line); the failed delivery comes right after it.
    await eventually(() => entriesOf().some((entry) => entry.msg === "rpc"), { what: "the watch to end", timeoutMs: 5_000 });
    const next = await http1Request(t.server.url, wire.agent, { path: "/grpc.health.v1.Health/Check", headers: { "content-type": "application/json" }, body: "{}" });
    expect(next.status).toBe(200);
    expect(entriesOf().filter((entry) => (entry.level as number) >= 40)).toEqual([]);
    expect(consoleError).not.toHaveBeenCalled();
  });
});

describe("a client that hangs up while it sends a stream's request (HTTP/1.1)", () => {
  it("ends the call as canceled: no error line, no internal, and the server answers the next call", async () => {
    const url = new URL(t.server.url);
    for (const contentType of ["application/connect+proto", "application/connect+json"]) {
      const requestId = `hang-up-body-${contentType.endsWith("json") ? "json" : "proto"}-${Date.now()}`;
      const socket = net.connect({ host: url.hostname, port: Number(url.port) });
      socket.on("error", () => undefined);
      await new Promise((resolve) => socket.once("connect", resolve));
      // A server-streaming call whose body announces 100 bytes and brings 7 of them, then the connection closes.
      socket.write(`POST /grpc.health.v1.Health/Watch HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: ${contentType}\r\nx-request-id: ${requestId}\r\ncontent-length: 100\r\n\r\n`);
      socket.write(Buffer.from([0, 0, 0, 0, 10, 1, 2]));
      socket.destroy();
      const entriesOf = () => t.server.logs.parsed().filter((entry) => entry.requestId === requestId);
      await eventually(() => entriesOf().some((entry) => entry.msg === "rpc"), { what: "the call to end", timeoutMs: 5_000 });
      expect(entriesOf().filter((entry) => (entry.level as number) >= 50), contentType).toEqual([]);
      expect(entriesOf().find((entry) => entry.msg === "rpc")?.code, contentType).toBe("canceled");
    }
    const next = await http1Request(t.server.url, wire.agent, { path: "/grpc.health.v1.Health/Check", headers: { "content-type": "application/json" }, body: "{}" });
    expect(next.status).toBe(200);
  });
});

describe("a client that hangs up while it sends a stream's request (HTTP/2, the connection closed)", () => {
  it("ends the call as canceled: no error line, no internal", async () => {
    for (const contentType of ["application/connect+proto", "application/grpc"]) {
      const requestId = `h2-hang-up-body-${contentType.endsWith("grpc") ? "grpc" : "connect"}-${Date.now()}`;
      const session = http2.connect(t.server.url);
      session.on("error", () => undefined);
      await new Promise((resolve) => session.once("connect", resolve));
      const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": contentType, te: "trailers", "x-request-id": requestId });
      stream.on("error", () => undefined);
      stream.write(Buffer.from([0, 0, 0, 0, 10, 1, 2]));
      // A ping's answer comes after the server read the frames before it: the message is half-read.
      await new Promise((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve(undefined))));
      session.destroy();
      const entriesOf = () => t.server.logs.parsed().filter((entry) => entry.requestId === requestId);
      await eventually(() => entriesOf().some((entry) => entry.msg === "rpc"), { what: "the call to end", timeoutMs: 5_000 });
      expect(entriesOf().filter((entry) => (entry.level as number) >= 50), contentType).toEqual([]);
      expect(entriesOf().find((entry) => entry.msg === "rpc")?.code, contentType).toBe("canceled");
    }
  });
});

describe("a gRPC client that resets its stream in the middle of a message (HTTP/2 CANCEL)", () => {
  // Known bug (reported): the cut-off read ends as connect's "incomplete envelope" before the request's signal is
  // aborted, so decode-check.ts refuses it with a warning and counts invalid_argument. Flip to `it` once fixed.
  // Not the fix: asking node whether the client has gone when the read fails — Node's client ends the stream
  // (END_STREAM) before it sends RST_STREAM, so at that moment the request looks like any cut-off body (aborted false,
  // rstCode 0, not closed). The refusal's warning would have to wait for whether its answer was delivered.
  it.fails("is no warning and no refusal counted: the client went away, nothing was refused", async () => {
    const requestId = `h2-cancel-${Date.now()}`;
    const session = http2.connect(t.server.url);
    session.on("error", () => undefined);
    try {
      await new Promise((resolve) => session.once("connect", resolve));
      const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers", "x-request-id": requestId });
      stream.on("error", () => undefined);
      // An envelope that announces 10 bytes and brings 2 of them.
      stream.write(Buffer.from([0, 0, 0, 0, 10, 1, 2]));
      // A ping's answer comes after the server read the frames before it: the message is half-read.
      await new Promise((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve(undefined))));
      stream.close(http2.constants.NGHTTP2_CANCEL);
      // A later call on the same connection is handled after the reset was.
      const marker = `after-${requestId}`;
      const next = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/json", "x-request-id": marker });
      next.on("error", () => undefined);
      next.end("{}");
      next.resume();
      await eventually(() => t.server.logs.parsed().some((entry) => entry.requestId === marker && entry.msg === "rpc"), { what: "the next call to be served" });
    } finally {
      session.destroy();
    }
    const warnings = t.server.logs.parsed().filter((entry) => entry.requestId === requestId && (entry.level as number) >= 40);
    expect(warnings).toEqual([]);
  });
});
