import net from "node:net";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { envelope, errorInfoReasons, grpcStatus, h2Request, http1Request, jsonErrorReason, useWireConnections } from "../fuzz/wire.js";
import { useTestServer } from "../support/server.js";

// API.md "Input" / decode-check.ts / node-adapter.ts: what the transport refuses before any RPC runs is answered
// with ErrorInfo and x-request-id — a body that inflates beyond the request limit is resource_exhausted
// request.too_large, an envelope with flags no client may set is invalid_argument request.malformed, and an RPC
// request whose Host header cannot make a URL is invalid_argument http.bad_host.
const LIMIT = 1024;
const t = useTestServer({ config: { maxRequestBytes: LIMIT } });
const wire = useWireConnections(() => t.server);
const GET_USER = "/gatehouse.admin.v1.UserService/GetUser";
const RESOURCE_EXHAUSTED = 8;
const INVALID_ARGUMENT = 3;

/** 64 KiB of zeros, a few hundred bytes gzipped: small on the wire, far beyond the limit inflated. */
const BOMB = gzipSync(Buffer.alloc(64 * 1024));

describe("a body that inflates beyond the request limit", () => {
  it("Connect unary with content-encoding gzip: HTTP 429 resource_exhausted, request.too_large, saying it was after decompression", async () => {
    expect(BOMB.byteLength).toBeLessThan(LIMIT);
    const response = await http1Request(t.server.url, wire.agent, { path: GET_USER, headers: { "content-type": "application/proto", "content-encoding": "gzip", authorization: `Bearer ${t.server.adminToken}` }, body: BOMB });
    expect(response.status).toBe(429);
    const body = JSON.parse(response.body.toString()) as { code: string; message: string };
    expect(body).toMatchObject({ code: "resource_exhausted", message: `request larger than ${LIMIT} bytes after decompression` });
    expect(jsonErrorReason(response.body)).toBe("request.too_large");
    expect(response.headers["x-request-id"]).toMatch(/.+/);
  });

  it("a gRPC message compressed with grpc-encoding gzip: status 8, request.too_large", async () => {
    const response = await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", "grpc-encoding": "gzip", authorization: `Bearer ${t.server.adminToken}` }, body: envelope(BOMB, 1) });
    const status = grpcStatus(response);
    expect(status.code).toBe(RESOURCE_EXHAUSTED);
    expect(decodeURIComponent(status.message ?? "")).toBe(`request larger than ${LIMIT} bytes after decompression`);
    expect(errorInfoReasons(status.detailsBin)).toEqual(["request.too_large"]);
  });
});

describe("an envelope with flags other than 'compressed'", () => {
  it("gRPC: status 3, request.malformed, naming the flags", async () => {
    const message = Uint8Array.from([0x0a, 0x01, 0x78]);
    for (const flags of [0x02, 0x80]) {
      const response = await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", authorization: `Bearer ${t.server.adminToken}` }, body: envelope(message, flags) });
      const status = grpcStatus(response);
      expect(status.code, String(flags)).toBe(INVALID_ARGUMENT);
      expect(decodeURIComponent(status.message ?? ""), String(flags)).toBe(`unexpected envelope flags 0x${flags.toString(16)} in a request`);
      expect(errorInfoReasons(status.detailsBin)).toEqual(["request.malformed"]);
    }
  });
});

/** A hand-written HTTP/1.1 request (Node's client will not send a bad Host); resolves with the raw answer. */
function rawRequest(head: string, body: string): Promise<string> {
  const url = new URL(t.server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      answer += chunk;
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.end(`${head}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
}

describe("an RPC request whose Host header makes no URL", () => {
  it("HTTP 400 with a JSON body: invalid_argument, http.bad_host, and the request id", async () => {
    const answer = await rawRequest(`POST ${GET_USER} HTTP/1.1\r\nhost: a b\r\ncontent-type: application/json\r\nx-request-id: bad-host-1`, "{}");
    const [head = "", chunked = ""] = answer.split("\r\n\r\n");
    // The body comes chunked: the JSON is between the chunk sizes.
    const body = chunked.slice(chunked.indexOf("{"), chunked.lastIndexOf("}") + 1);
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.toLowerCase()).toContain("content-type: application/json");
    expect(head.toLowerCase()).toContain("x-request-id: bad-host-1");
    expect(JSON.parse(body)).toMatchObject({ message: "the request needs a valid Host header" });
    expect(jsonErrorReason(Buffer.from(body))).toBe("http.bad_host");
  });

  it("is refused whatever valid hosts came before it, and every valid host is served, however many there were", async () => {
    const health = "/grpc.health.v1.Health/Check";
    const statusOf = async (host: string) => (await rawRequest(`POST ${health} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json`, "{}")).split(" ", 2)[1];
    // More distinct valid hosts than the adapter remembers (node-adapter.ts), each twice: all served.
    for (let i = 0; i < 70; i++) {
      expect(await statusOf(`h${i}.example:80`), `h${i}`).toBe("200");
      expect(await statusOf(`h${i}.example:80`), `h${i} again`).toBe("200");
    }
    expect(await statusOf("a b")).toBe("400");
    expect(await statusOf("h1.example:80")).toBe("200");
  });
});
