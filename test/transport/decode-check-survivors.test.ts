import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { create, toBinary } from "@bufbuild/protobuf";
import { ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import { DomainError } from "../../src/domain/errors.js";
import { checkJsonMessage } from "../../src/transport/decode-check.js";
import { connectH2, envelope, errorInfoReasons, grpcStatus, h2Request, http1Request, useWireConnections } from "../fuzz/wire.js";
import { eventually } from "../support/eventually.js";
import { useTestServer, withFreshServer } from "../support/server.js";
import { thrownBy } from "../support/thrown.js";

// decode-check.ts: what the JSON reader says about an undecodable request is cut to 300 characters (a hostile body
// must not become a huge answer); and a client that hangs up while it sends its request is no refusal: nothing to
// answer, nothing the server did wrong — no warning, no error (and no internal error) in the log.
const t = useTestServer();
const wire = useWireConnections(() => t.server);
afterEach(() => {
  vi.restoreAllMocks();
});

const GET_USER = "/gatehouse.admin.v1.UserService/GetUser";
const PREFIX = "undecodable JSON request: ";
let sequence = 0;
const newRequestId = (what: string) => `decode-${what}-${Date.now()}-${++sequence}`;

describe("the JSON reader's complaint about an undecodable request is cut to 300 characters", () => {
  it("an Any of an unknown type of 1 000 characters: the reader names it whole, the refusal keeps the first 300 characters of what it says", () => {
    const typeUrl = `type.googleapis.com/${"x".repeat(1_000)}`;
    const error = thrownBy(DomainError, () => checkJsonMessage(StatusSchema, { details: [{ "@type": typeUrl }] }));
    expect(error).toMatchObject({ kind: "invalid_argument", reason: "request.malformed" });
    expect(error.message.startsWith(`${PREFIX}cannot decode message google.protobuf.Any from JSON: `)).toBe(true);
    expect(error.message).toHaveLength(PREFIX.length + 300);
    expect(error.message).toContain("xxxxxxxxxx");
  });

  it("a short complaint is kept whole", () => {
    const error = thrownBy(DomainError, () => checkJsonMessage(StatusSchema, { code: "three" }));
    expect(error.message).toBe(`${PREFIX}cannot decode field google.rpc.Status.code from JSON: expected number (int32), got "three"`);
  });
});

/** Log lines about `requestId` at warning level or above. */
const loudEntriesOf = (requestId: string) => t.server.logs.parsed().filter((entry) => entry.requestId === requestId && (entry.level as number) >= 40);

describe("a client that hangs up while it sends its request is no refusal and no error", () => {
  it("Connect JSON over HTTP/1.1: the server takes the request, gets half the declared body, then the connection closes", async () => {
    const consoleError = vi.spyOn(console, "error");
    const requestId = newRequestId("http1");
    // The server's answer to a client that is gone never arrives: the test sees it begin, on the server's side.
    const answered: unknown[] = [];
    const writeHead = http.ServerResponse.prototype.writeHead;
    vi.spyOn(http.ServerResponse.prototype, "writeHead").mockImplementation(function (this: http.ServerResponse, ...args: unknown[]) {
      answered.push(this.getHeader("x-request-id"));
      return (writeHead as (...a: unknown[]) => http.ServerResponse).apply(this, args);
    } as never);
    const url = new URL(t.server.url);
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    socket.on("error", () => undefined);
    // "Expect: 100-continue": the server says "100 Continue" once the request is in its hands.
    const continued = new Promise((resolve) => socket.once("data", resolve));
    socket.write(`POST ${GET_USER} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\nx-request-id: ${requestId}\r\nexpect: 100-continue\r\ncontent-length: 1000\r\n\r\n`);
    expect(String(await continued)).toMatch(/^HTTP\/1\.1 100 /);
    socket.write('{"userId": "');
    socket.destroy();

    await eventually(() => answered.includes(requestId), { what: "the server to answer the request", timeoutMs: 5_000 });
    expect(loudEntriesOf(requestId)).toEqual([]);
    expect(t.server.logs.parsed().filter((entry) => entry.msg === "internal error")).toEqual([]);
    expect(consoleError).not.toHaveBeenCalled();
    // The server goes on.
    const next = await http1Request(t.server.url, wire.agent, { path: "/grpc.health.v1.Health/Check", headers: { "content-type": "application/json" }, body: "{}" });
    expect(next.status).toBe(200);
  });
});

describe("a unary or server-streaming call takes exactly one request message; client and bidi streams take any number", () => {
  // Which methods take one message is settled when the server starts: this test starts its own.
  it("gRPC: none or two for GetUser and Health.Watch are invalid_argument request.malformed; two for the reflection stream are answered", async () => {
    await withFreshServer(async (server) => {
      const session = await connectH2(server.url);
      try {
        const call = (path: string, body: Uint8Array) => h2Request(session, { path, headers: { "content-type": "application/grpc", authorization: `Bearer ${server.adminToken}` }, body });
        const refused = async (path: string, body: Uint8Array, message: string) => {
          const status = grpcStatus(await call(path, body));
          expect(status.code, path).toBe(3);
          expect(decodeURIComponent(status.message ?? ""), path).toBe(message);
          expect(errorInfoReasons(status.detailsBin), path).toEqual(["request.malformed"]);
        };
        const one = envelope(new Uint8Array(0));
        const two = Buffer.concat([one, one]);
        await refused(GET_USER, new Uint8Array(0), "this method takes exactly one request message; none was sent");
        await refused(GET_USER, two, "this method takes exactly one request message");
        await refused("/grpc.health.v1.Health/Watch", new Uint8Array(0), "this method takes exactly one request message; none was sent");
        await refused("/grpc.health.v1.Health/Watch", two, "this method takes exactly one request message");

        const list = envelope(toBinary(ServerReflectionRequestSchema, create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } })));
        const reflection = await call("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", Buffer.concat([list, list]));
        expect(grpcStatus(reflection).code).toBe(0);
      } finally {
        session.close();
      }
    });
  });
});

describe("a deadline a Node timer cannot hold means no deadline", () => {
  it.each([
    ["2147483648", "the first that overflows"],
    ["2147483647", "the longest a timer holds"],
  ])("Connect connect-timeout-ms %s (%s): answered, and no TimeoutOverflowWarning", async (timeoutMs) => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      const response = await http1Request(t.server.url, wire.agent, {
        path: "/grpc.health.v1.Health/Check",
        headers: { "content-type": "application/json", "connect-timeout-ms": timeoutMs },
        body: "{}",
      });
      expect(response.status).toBe(200);
      // Node emits warnings on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  });
});
