import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { envelope, errorInfoReasons, grpcStatus, h2Request, http1Request, jsonErrorReason, useWireConnections, type WireResponse } from "../fuzz/wire.js";
import { useTestServer } from "../support/server.js";

// API.md "Errors": every error carries ErrorInfo with a stable reason, and every response x-request-id — also what
// the transport refuses before an RPC runs (decode-check.ts, node-adapter.ts): the protocol handlers' own answers
// (405, 415, 505) get a body with ErrorInfo, and each refusal says what was wrong.
const LIMIT = 1024;
const t = useTestServer({ config: { maxRequestBytes: LIMIT } });
const wire = useWireConnections(() => t.server);
const GET_USER = "/gatehouse.admin.v1.UserService/GetUser";
const REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
const INVALID_ARGUMENT = 3;
const MESSAGE = Uint8Array.from([0x0a, 0x01, 0x78]);

/** The Connect JSON error of an HTTP/1.1 answer: HTTP status, code, message, ErrorInfo reason. */
function connectError(response: WireResponse) {
  const json = JSON.parse(response.body.toString()) as { code?: unknown; message?: string };
  expect(response.headers["x-request-id"]).toMatch(/.+/);
  return { status: response.status, code: json.code, message: json.message, reason: jsonErrorReason(response.body) };
}

/** The gRPC status of an answer, its message decoded. */
function grpcError(response: WireResponse) {
  const status = grpcStatus(response);
  return { code: status.code, message: decodeURIComponent(status.message ?? ""), reasons: errorInfoReasons(status.detailsBin) };
}

/** The end-of-stream message (flags 0x02) of a Connect streaming answer. */
function endOfStream(body: Buffer): { error?: { code: string; message: string } } {
  for (let offset = 0; offset + 5 <= body.byteLength; offset += 5 + body.readUInt32BE(offset + 1)) {
    if (body.readUInt8(offset) & 0b10) return JSON.parse(body.subarray(offset + 5, offset + 5 + body.readUInt32BE(offset + 1)).toString()) as { error?: { code: string; message: string } };
  }
  return expect.fail("no end-of-stream message");
}

// With a valid token: without one a unary call's body is not read at all (test/transport/admission-rules.test.ts).
const post = (headers: Record<string, string>, body: Uint8Array | string) => http1Request(t.server.url, wire.agent, { path: GET_USER, headers: { authorization: `Bearer ${t.server.adminToken}`, ...headers }, body });
const grpc = (headers: Record<string, string>, body: Uint8Array, path = GET_USER) =>
  h2Request(wire.session, { path, headers: { "content-type": "application/grpc", authorization: `Bearer ${t.server.adminToken}`, ...headers }, body });

describe("what the protocol handlers answer without a body gets the SPEC body with ErrorInfo", () => {
  it("GET on an RPC path: 405, allow POST, http.method_not_allowed", async () => {
    const response = await http1Request(t.server.url, wire.agent, { method: "GET", path: GET_USER });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("POST");
    expect(response.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(response.body.toString()) as { message: string };
    expect(body.message).toBe("RPCs take POST");
    expect(jsonErrorReason(response.body)).toBe("http.method_not_allowed");
    expect(Number(response.headers["content-length"])).toBe(response.body.byteLength);
  });

  it("a content type no protocol speaks: 415, http.unsupported_media_type", async () => {
    const response = await post({ "content-type": "text/plain" }, "{}");
    expect(response.status).toBe(415);
    expect(response.headers.allow).toBeUndefined();
    expect(JSON.parse(response.body.toString())).toMatchObject({ message: "unsupported content type for an RPC" });
    expect(jsonErrorReason(response.body)).toBe("http.unsupported_media_type");
  });

  it("gRPC-web-text (base64 bodies), which the server does not speak: 415, not a decoding error", async () => {
    const response = await post({ "content-type": "application/grpc-web-text" }, envelope(MESSAGE).toString("base64"));
    expect(response.status).toBe(415);
    expect(jsonErrorReason(response.body)).toBe("http.unsupported_media_type");
  });

  it("a bidi stream over HTTP/1.1: the caller's protocol choice, so 400 (not 505), http.version_not_supported", async () => {
    const response = await http1Request(t.server.url, wire.agent, { path: REFLECTION, headers: { "content-type": "application/connect+proto" }, body: envelope(new Uint8Array(0)) });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString())).toMatchObject({ message: "bidirectional streams need HTTP/2" });
    expect(jsonErrorReason(response.body)).toBe("http.version_not_supported");
  });
});

describe("undecodable bodies: invalid_argument request.malformed, saying why", () => {
  it("Connect JSON that is not UTF-8", async () => {
    const result = connectError(await post({ "content-type": "application/json" }, Uint8Array.from([0x7b, 0xff, 0x7d])));
    expect(result).toEqual({ status: 400, code: "invalid_argument", message: "the request is not valid UTF-8 JSON", reason: "request.malformed" });
  });

  it("protobuf bytes that do not decode, and bytes that do not inflate, say so", async () => {
    const garbage = connectError(await post({ "content-type": "application/proto" }, Uint8Array.from([0x0f, 0xff, 0xff, 0xff])));
    expect(garbage).toMatchObject({ status: 400, code: "invalid_argument", reason: "request.malformed" });
    expect(garbage.message).toMatch(/^undecodable protobuf request: \S/);
    for (const encoding of ["gzip", "br"]) {
      expect(connectError(await post({ "content-type": "application/proto", "content-encoding": encoding }, Uint8Array.from([0x31])))).toEqual({
        status: 400,
        code: "invalid_argument",
        message: `the request does not decompress as ${encoding}`,
        reason: "request.malformed",
      });
    }
  });

  it("a unary gRPC call without its message, or with two", async () => {
    expect(grpcError(await grpc({}, new Uint8Array(0)))).toEqual({ code: INVALID_ARGUMENT, message: "this method takes exactly one request message; none was sent", reasons: ["request.malformed"] });
    expect(grpcError(await grpc({}, Buffer.concat([envelope(MESSAGE), envelope(MESSAGE)])))).toEqual({
      code: INVALID_ARGUMENT,
      message: "this method takes exactly one request message",
      reasons: ["request.malformed"],
    });
  });

  it("a gRPC body that ends inside its envelope, unary or streaming: invalid_argument request.malformed", async () => {
    const whole = envelope(MESSAGE);
    const incomplete = { code: INVALID_ARGUMENT, message: "the request ends inside a message envelope", reasons: ["request.malformed"] };
    expect(grpcError(await grpc({}, whole.subarray(0, whole.length - 1)))).toEqual(incomplete);
    expect(grpcError(await grpc({}, Buffer.concat([whole, Uint8Array.of(0, 0)])))).toEqual(incomplete);
    expect(grpcError(await grpc({}, whole.subarray(0, 2), REFLECTION))).toEqual(incomplete);
  });

  it("a gRPC message declared longer than the limit is refused from its header, unary or streaming: resource_exhausted request.too_large", async () => {
    const header = Uint8Array.from([0, 0, 0, (LIMIT + 1) >> 8, (LIMIT + 1) & 0xff]);
    const tooLarge = { code: 8, message: `request message of ${LIMIT + 1} bytes is larger than ${LIMIT} bytes`, reasons: ["request.too_large"] };
    expect(grpcError(await grpc({}, header))).toEqual(tooLarge);
    expect(grpcError(await grpc({}, header, REFLECTION))).toEqual(tooLarge);
  });

  it("a server-streaming call takes exactly one request message too", async () => {
    const WATCH = "/grpc.health.v1.Health/Watch";
    expect(grpcError(await grpc({}, new Uint8Array(0), WATCH))).toEqual({ code: INVALID_ARGUMENT, message: "this method takes exactly one request message; none was sent", reasons: ["request.malformed"] });
    expect(grpcError(await grpc({}, Buffer.concat([envelope(new Uint8Array(0)), envelope(new Uint8Array(0))]), WATCH))).toEqual({
      code: INVALID_ARGUMENT,
      message: "this method takes exactly one request message",
      reasons: ["request.malformed"],
    });
  });

  it("a bidi call takes any number of messages: two good reflection requests get two answers", async () => {
    const listServices = toBinary(ServerReflectionRequestSchema, create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } }));
    const response = await grpc({}, Buffer.concat([envelope(listServices), envelope(listServices)]), REFLECTION);
    expect(grpcStatus(response).code).toBe(0);
    let answers = 0;
    for (let offset = 0; offset + 5 <= response.body.byteLength; offset += 5 + response.body.readUInt32BE(offset + 1)) answers++;
    expect(answers).toBe(2);
  });

  it("a compressed message without its encoding header names the header of its protocol", async () => {
    expect(grpcError(await grpc({}, envelope(MESSAGE, 1)))).toEqual({ code: INVALID_ARGUMENT, message: "a compressed message needs a grpc-encoding header", reasons: ["request.malformed"] });
    const connectStream = await h2Request(wire.session, { path: REFLECTION, headers: { "content-type": "application/connect+proto" }, body: envelope(MESSAGE, 1) });
    expect(endOfStream(connectStream.body).error).toMatchObject({ code: "invalid_argument", message: "a compressed message needs a connect-content-encoding header" });
  });

  it("the bytes of a good message still reach the RPC unchanged (it answers on its own terms)", async () => {
    const result = grpcError(await grpc({ authorization: `Bearer ${t.server.adminToken}` }, envelope(MESSAGE)));
    expect(result.reasons).not.toContain("request.malformed");
    expect(result.code).not.toBe(INVALID_ARGUMENT);
  });
});

describe("header problems the handler would answer without ErrorInfo get it", () => {
  it("an unknown content encoding names it and what is supported", async () => {
    expect(connectError(await post({ "content-type": "application/proto", "content-encoding": "snappy" }, MESSAGE))).toEqual({
      status: 400,
      code: "invalid_argument",
      message: 'unsupported content-encoding "snappy"; supported: gzip, br',
      reason: "request.unsupported_encoding",
    });
    expect(grpcError(await grpc({ "grpc-encoding": "snappy" }, envelope(MESSAGE, 1)))).toEqual({
      code: INVALID_ARGUMENT,
      message: 'unsupported grpc-encoding "snappy"; supported: gzip, br',
      reasons: ["request.unsupported_encoding"],
    });
  });

  it("a timeout header that is no timeout: invalid_argument with ErrorInfo, for Connect and gRPC", async () => {
    expect(connectError(await post({ "content-type": "application/proto", "connect-timeout-ms": "soon" }, MESSAGE))).toEqual({
      status: 400,
      code: "invalid_argument",
      message: "protocol error: invalid connect timeout value: soon",
      reason: "rpc.invalid_argument",
    });
    expect(grpcError(await grpc({ "grpc-timeout": "soon" }, envelope(MESSAGE)))).toEqual({
      code: INVALID_ARGUMENT,
      message: "protocol error: invalid grpc timeout value: soon",
      reasons: ["rpc.invalid_argument"],
    });
  });

  it("an encoding name is cut to 32 characters in the answer", async () => {
    const name = `x-${"z".repeat(60)}`;
    const result = connectError(await post({ "content-type": "application/proto", "content-encoding": name }, MESSAGE));
    expect(result.message).toBe(`unsupported content-encoding "${name.slice(0, 32)}"; supported: gzip, br`);
  });

  it("identity is no encoding at all", async () => {
    const result = connectError(await post({ "content-type": "application/proto", "content-encoding": "identity" }, Uint8Array.from([0x0f, 0xff])));
    expect(result.reason).toBe("request.malformed");
  });
});

describe("a body larger than the limit: resource_exhausted request.too_large", () => {
  it("declared by its content-length", async () => {
    expect(connectError(await post({ "content-type": "application/proto", "content-length": String(LIMIT + 1) }, new Uint8Array(LIMIT + 1)))).toEqual({
      status: 429,
      code: "resource_exhausted",
      message: `request larger than ${LIMIT} bytes`,
      reason: "request.too_large",
    });
  });

  it("sent chunked, without a length", async () => {
    expect(connectError(await post({ "content-type": "application/proto", "transfer-encoding": "chunked" }, new Uint8Array(LIMIT + 1)))).toEqual({
      status: 429,
      code: "resource_exhausted",
      message: `request larger than ${LIMIT} bytes`,
      reason: "request.too_large",
    });
  });

  it("exactly the limit is not too large", async () => {
    const result = connectError(await post({ "content-type": "application/proto" }, new Uint8Array(LIMIT)));
    expect(result.reason).not.toBe("request.too_large");
  });
});

describe("a good request passes the check in every framing the server speaks, and reaches its RPC", () => {
  const CHECK = "/grpc.health.v1.Health/Check";
  const json = Buffer.from('{"service":""}');
  const binary = new Uint8Array(0);

  it("Connect unary JSON and protobuf over HTTP/1.1", async () => {
    for (const [contentType, body] of [["application/json", json], ["application/proto", binary]] as const) {
      const response = await http1Request(t.server.url, wire.agent, { path: CHECK, headers: { "content-type": contentType }, body });
      expect(response.status, contentType).toBe(200);
    }
  });

  it("gRPC and gRPC-web, protobuf and JSON", async () => {
    for (const [contentType, body] of [["application/grpc", binary], ["application/grpc+json", json], ["application/grpc-web", binary], ["application/grpc-web+json", json]] as const) {
      const response = await h2Request(wire.session, { path: CHECK, headers: { "content-type": contentType, te: "trailers" }, body: envelope(body) });
      expect(grpcStatus(response).code, contentType).toBe(0);
    }
  });

  it("Connect server streaming, JSON and protobuf: the first update arrives", async () => {
    for (const [contentType, body] of [["application/connect+json", json], ["application/connect+proto", binary]] as const) {
      const stream = wire.session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Watch", "content-type": contentType });
      const first = new Promise<Buffer>((resolve, reject) => {
        stream.once("data", resolve);
        stream.once("error", reject);
      });
      stream.end(envelope(body));
      const data = await first;
      stream.close();
      expect(data.readUInt8(0) & 0b10, contentType).toBe(0);
    }
  });

  it("GET on an RPC path is 405 whatever its content type and body: only POST bodies are decoded", async () => {
    const response = await http1Request(t.server.url, wire.agent, {
      method: "GET",
      path: GET_USER,
      headers: { "content-type": "application/proto", "content-length": "2" },
      body: Uint8Array.from([0x0f, 0xff]),
    });
    expect(response.status).toBe(405);
    expect(jsonErrorReason(response.body)).toBe("http.method_not_allowed");
  });
});
