import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { useTestServer } from "../support/server.js";
import { envelope, errorInfoReasons, grpcStatus, h2Request, http1Request, jsonErrorReason, type WireResponse, useWireConnections } from "../fuzz/wire.js";

const t = useTestServer();
const wire = useWireConnections(() => t.server);

/** Bytes that are no protobuf message: a field with an unknown wire type 7. */
const GARBAGE = Uint8Array.from([0x0f, 0xff, 0xff, 0xff]);
const GET_USER = "/gatehouse.admin.v1.UserService/GetUser";
const INVALID_ARGUMENT = 3;

/** Log lines the server wrote at error level or above, or with a stack. */
function loudLines(): string[] {
  return t.server.logs.lines.filter((line) => {
    const entry = JSON.parse(line) as { level: number };
    return entry.level >= 50 || line.includes('"stack"');
  });
}

function expectRefused(response: WireResponse) {
  const status = grpcStatus(response);
  expect(status.code).toBe(INVALID_ARGUMENT);
  expect(errorInfoReasons(status.detailsBin)).toEqual(["request.malformed"]);
  expect(response.headers["x-request-id"]).toMatch(/.+/);
}

describe("undecodable protobuf requests are invalid_argument with ErrorInfo, never internal", () => {
  it("Connect binary over HTTP/1.1: HTTP 400, code invalid_argument, reason request.malformed, x-request-id", async () => {
    const response = await http1Request(t.server.url, wire.agent, { path: GET_USER, headers: { "content-type": "application/proto", authorization: `Bearer ${t.server.adminToken}` }, body: GARBAGE });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString())).toMatchObject({ code: "invalid_argument" });
    expect(jsonErrorReason(response.body)).toBe("request.malformed");
    expect(response.headers["x-request-id"]).toMatch(/.+/);
  });

  it("gRPC over h2c: status 3", async () => {
    const response = await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", authorization: `Bearer ${t.server.adminToken}` }, body: envelope(GARBAGE) });
    expectRefused(response);
  });

  it("gRPC with the compressed flag set and no grpc-encoding: status 3", async () => {
    const response = await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", authorization: `Bearer ${t.server.adminToken}` }, body: envelope(Uint8Array.from([0x0a, 0x01, 0x78]), 1) });
    expectRefused(response);
  });

  it("gRPC-web over HTTP/1.1: status 3 in the trailer frame", async () => {
    const response = await http1Request(t.server.url, wire.agent, { path: GET_USER, headers: { "content-type": "application/grpc-web+proto", authorization: `Bearer ${t.server.adminToken}` }, body: envelope(GARBAGE) });
    expect(response.status).toBe(200);
    expectRefused(response);
  });

  it("a unary gRPC call without its message, or with two, is invalid_argument too", async () => {
    expectRefused(await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", authorization: `Bearer ${t.server.adminToken}` }, body: new Uint8Array(0) }));
    const message = Uint8Array.from([0x0a, 0x01, 0x78]);
    expectRefused(await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", authorization: `Bearer ${t.server.adminToken}` }, body: Buffer.concat([envelope(message), envelope(message)]) }));
  });

  it("a body that does not inflate under its content-encoding, and an encoding the server does not know: invalid_argument with ErrorInfo", async () => {
    for (const [encoding, reason] of [
      ["gzip", "request.malformed"],
      ["br", "request.malformed"],
      ["snappy", "request.unsupported_encoding"],
    ] as const) {
      const response = await http1Request(t.server.url, wire.agent, { path: GET_USER, headers: { "content-type": "application/proto", "content-encoding": encoding, authorization: `Bearer ${t.server.adminToken}` }, body: Uint8Array.from([0x31]) });
      expect(response.status, encoding).toBe(400);
      expect(jsonErrorReason(response.body), encoding).toBe(reason);
      const grpc = await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", "grpc-encoding": encoding, authorization: `Bearer ${t.server.adminToken}` }, body: envelope(Uint8Array.from([0x31]), 1) });
      expect(grpcStatus(grpc).code, encoding).toBe(INVALID_ARGUMENT);
      expect(errorInfoReasons(grpcStatus(grpc).detailsBin), encoding).toEqual([reason]);
    }
  });

  it("a deadline beyond what a Node timer holds means no deadline, not a 1 ms timer and a warning on stderr per call", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      const response = await h2Request(wire.session, {
        path: "/grpc.health.v1.Health/Check",
        headers: { "content-type": "application/grpc", "grpc-timeout": "99999999S" },
        body: envelope(new Uint8Array(0)),
      });
      expect(grpcStatus(response).code).toBe(0);
      // Node emits warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  });

  it("the token-free reflection stream: a bad message after a good one ends the stream with status 3, and nothing reaches the error log", async () => {
    const good = toBinary(ServerReflectionRequestSchema, create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } }));
    const before = loudLines().length;
    const logStart = t.server.logs.lines.length;
    for (let i = 0; i < 20; i++) {
      const response = await h2Request(wire.session, {
        path: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        headers: { "content-type": "application/grpc" },
        body: Buffer.concat([envelope(good), envelope(GARBAGE)]),
      });
      expectRefused(response);
    }
    expect(loudLines().slice(before)).toEqual([]);
    // A stream's messages are decoded as the rpc reads them (the transport does not decode them twice): each call is
    // recorded once, as an rpc that ended invalid_argument.
    const calls = t.server.logs.parsed().slice(logStart).filter((entry) => entry.msg === "rpc" && entry.procedure === "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo");
    expect(calls).toHaveLength(20);
    expect(calls.every((entry) => entry.code === "invalid_argument")).toBe(true);
  });

  describe("a refused call is one call: one rpc_calls sample and one log line", () => {
    const REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
    const good = toBinary(ServerReflectionRequestSchema, create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } }));
    const sampled = async (procedure: string, code: string) => {
      const metrics = await (await fetch(`${t.server.url}/metrics`)).text();
      const line = metrics.split("\n").find((l) => l.startsWith("gatehouse_rpc_calls_total{") && l.includes(`procedure="${procedure}"`) && l.includes(`code="${code}"`));
      return line === undefined ? 0 : Number(line.split(" ").at(-1));
    };
    const cases: [string, string, Record<string, string>, Buffer, [string, string]][] = [
      // Streams: connect-es reads their messages inside the interceptors, so the rpc records the refusal.
      ["bidi, envelope flags no request may carry on its second message", REFLECTION, {}, Buffer.concat([envelope(good), envelope(good, 0x80)]), ["rpc", "invalid_argument"]],
      ["bidi, a timeout header that is no timeout", REFLECTION, { "grpc-timeout": "soon" }, envelope(good), ["rpc", "invalid_argument"]],
      ["server stream, an undecodable message", "/grpc.health.v1.Health/Watch", {}, envelope(GARBAGE), ["rpc", "invalid_argument"]],
      // Unary: connect-es reads the message before any interceptor runs, so the transport records it.
      ["unary, an undecodable message", GET_USER, {}, envelope(GARBAGE), ["request refused before the rpc", "invalid_argument"]],
    ];
    for (const [what, procedure, headers, body, recorded] of cases) {
      it(what, async () => {
        const before = await sampled(procedure, "invalid_argument");
        const logStart = t.server.logs.lines.length;
        // With a token: a unary call's body is read only then (the public streams take it too, and need none).
        const withToken = { "content-type": "application/grpc", authorization: `Bearer ${t.server.adminToken}`, ...headers };
        expect(grpcStatus(await h2Request(wire.session, { path: procedure, headers: withToken, body })).code).toBe(INVALID_ARGUMENT);
        expect(await sampled(procedure, "invalid_argument")).toBe(before + 1);
        const lines = t.server.logs.parsed().slice(logStart).filter((entry) => entry.procedure === procedure);
        expect(lines.map((entry) => [entry.msg, entry.code])).toEqual([recorded]);
      });
    }

    it("a stream whose caller is refused before it reads its body is recorded as that refusal only", async () => {
      const importUsers = "/gatehouse.admin.v1.UserService/ImportHumanUsers";
      const [invalidBefore, unauthenticatedBefore] = [await sampled(importUsers, "invalid_argument"), await sampled(importUsers, "unauthenticated")];
      const response = await h2Request(wire.session, { path: importUsers, headers: { "content-type": "application/grpc", "grpc-timeout": "soon" }, body: envelope(GARBAGE) });
      expect(grpcStatus(response).code).toBe(16);
      expect([await sampled(importUsers, "invalid_argument"), await sampled(importUsers, "unauthenticated")]).toEqual([invalidBefore, unauthenticatedBefore + 1]);
    });
  });
});
