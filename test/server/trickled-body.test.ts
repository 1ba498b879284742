import { create, toBinary } from "@bufbuild/protobuf";
import { type ClientHttp2Session, connect as http2Connect } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { envelope } from "../fuzz/wire.js";
import { startTestServer, type TestServer } from "../support/server.js";

// Work a caller can trigger is bounded in time too: over HTTP/2 a request whose body trickles in (a byte every
// 300 ms, so the session is never idle) gets no more than the request timeout to arrive — an RPC, a REST route and a
// page alike — after which its stream is reset; a body that arrives in time is answered as usual.

const REQUEST_TIMEOUT_MS = 1_500;

describe("a request body trickled over HTTP/2", () => {
  let server: TestServer;
  let session: ClientHttp2Session;
  beforeAll(async () => {
    server = await startTestServer({ config: { requestTimeoutMs: REQUEST_TIMEOUT_MS, headersTimeoutMs: 1_000 } });
    session = http2Connect(server.url);
    session.on("error", () => undefined);
  });
  afterAll(async () => {
    session.destroy();
    await server.dispose();
  });

  /** Posts to `path`, one space every 300 ms and never the end: how the stream ended (or that it was still open after 5 request timeouts), and when. */
  function trickle(path: string, contentType: string) {
    const started = Date.now();
    return new Promise<{ outcome: string; afterMs: number }>((resolve) => {
      const settle = (outcome: string) => resolve({ outcome, afterMs: Date.now() - started });
      const stream = session.request({ ":method": "POST", ":path": path, "content-type": contentType, authorization: `Bearer ${server.adminToken}` });
      stream.on("error", () => undefined);
      stream.on("response", (headers) => settle(`answered ${headers[":status"]}`));
      stream.on("close", () => settle(`reset ${stream.rstCode}`));
      const writer = setInterval(() => (stream.destroyed ? clearInterval(writer) : stream.write(" ")), 300);
      setTimeout(() => {
        clearInterval(writer);
        settle("still open");
        stream.close();
      }, 5 * REQUEST_TIMEOUT_MS).unref();
    });
  }

  it.each([
    ["a unary RPC (Connect JSON)", "/gatehouse.admin.v1.InstanceService/GetInstance", "application/json"],
    ["a REST route", "/v1/users/human", "application/json"],
    ["a page's form", "/ui/login/mail/verification", "application/x-www-form-urlencoded"],
  ])("%s is cut off once the request timeout has passed", async (_, path, contentType) => {
    const { outcome, afterMs } = await trickle(path, contentType);
    expect(outcome).not.toBe("still open");
    expect(afterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  });

  it("a body that arrives in time is answered", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const stream = session.request({ ":method": "POST", ":path": "/gatehouse.admin.v1.InstanceService/GetInstance", "content-type": "application/json", authorization: `Bearer ${server.adminToken}` });
      stream.on("error", reject);
      stream.on("response", (headers) => resolve(String(headers[":status"])));
      stream.write("{");
      setTimeout(() => stream.end("}"), REQUEST_TIMEOUT_MS / 3);
    });
    expect(answer).toBe("200");
  });

  it("a bidirectional stream is no trickled body: its messages keep being answered past the request timeout", async () => {
    // The deadline is for one-message requests; a stream of messages (the reflection stream here, a bulk import in
    // production) may rightly last as long as its caller keeps it going.
    const listServices = envelope(toBinary(ServerReflectionRequestSchema, create(ServerReflectionRequestSchema, { messageRequest: { case: "listServices", value: "" } })));
    const lastsMs = 2 * REQUEST_TIMEOUT_MS + 500;
    const { answers, outcome } = await new Promise<{ answers: number; outcome: string }>((resolve) => {
      const stream = session.request({ ":method": "POST", ":path": "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", "content-type": "application/grpc", te: "trailers" });
      let received = Buffer.alloc(0);
      const answered = () => {
        let count = 0;
        for (let offset = 0; offset + 5 <= received.length; offset += 5 + received.readUInt32BE(offset + 1)) count++;
        return count;
      };
      stream.on("error", () => undefined);
      stream.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
      });
      stream.on("close", () => resolve({ answers: answered(), outcome: stream.rstCode ? `reset ${stream.rstCode}` : "closed" }));
      const started = Date.now();
      const writer = setInterval(() => {
        if (stream.destroyed) return clearInterval(writer);
        if (Date.now() - started < lastsMs) return void stream.write(listServices);
        clearInterval(writer);
        stream.end();
      }, 300);
      stream.write(listServices);
    });
    expect(outcome).toBe("closed");
    expect(answers).toBeGreaterThanOrEqual(Math.floor(lastsMs / 300));
  });
});
