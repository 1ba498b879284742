import http from "node:http";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { envelope, errorInfoReasons, grpcStatus, h2Request, http1Request, jsonErrorReason, useWireConnections } from "../fuzz/wire.js";
import { useTestServer } from "../support/server.js";

// The brief: work a caller can trigger comes after its permission check. connect-es reads, inflates and parses a unary
// call's body before any interceptor runs, so a unary call of a protected service is authenticated first
// (interceptors/authentication.ts createAdmission, called by transport/decode-check.ts): a caller without a valid
// token gets unauthenticated, and nothing of its body is judged, inflated or even waited for.
const t = useTestServer();
const wire = useWireConnections(() => t.server);
const GET_USER = "/gatehouse.admin.v1.UserService/GetUser";
const HEALTH = "/grpc.health.v1.Health/Check";
const UNAUTHENTICATED = 16;
const INVALID_ARGUMENT = 3;
/** Two million brackets: 4 MiB inflated, a few KiB sent. */
const bomb = gzipSync(`{"userId":${"[".repeat(2_000_000)}${"]".repeat(2_000_000)}}`);

const connectJson = (body: Buffer | string, headers: Record<string, string>) =>
  http1Request(t.server.url, wire.agent, { path: GET_USER, headers: { "content-type": "application/json", ...headers }, body });

describe("a unary call of a protected service is authenticated before its body is read", () => {
  it("Connect JSON: a gzip bomb without a token is unauthenticated (auth.missing), not judged", async () => {
    const response = await connectJson(bomb, { "content-encoding": "gzip" });
    expect(response.status).toBe(401);
    expect(jsonErrorReason(response.body)).toBe("auth.missing");
  });

  it("with a token that is no token, or an unknown one: unauthenticated, the body not judged", async () => {
    const malformed = await connectJson(bomb, { "content-encoding": "gzip", authorization: "Bearer" });
    expect(jsonErrorReason(malformed.body)).toBe("auth.malformed");
    const unknown = await connectJson("{not json", { authorization: `Bearer ${t.server.adminToken.slice(0, -2)}xx` });
    expect(unknown.status).toBe(401);
    expect(jsonErrorReason(unknown.body)).toBe("auth.token_invalid");
  });

  it("with a valid token the body is judged: the same bomb is refused as malformed", async () => {
    const response = await connectJson(bomb, { "content-encoding": "gzip", authorization: `Bearer ${t.server.adminToken}` });
    expect(response.status).toBe(400);
    expect(jsonErrorReason(response.body)).toBe("request.malformed");
  });

  it("gRPC: the same, in the gRPC status", async () => {
    const framed = envelope(bomb, 1);
    const anonymous = await h2Request(wire.session, { path: GET_USER, headers: { "content-type": "application/grpc", "grpc-encoding": "gzip" }, body: framed });
    expect(grpcStatus(anonymous).code).toBe(UNAUTHENTICATED);
    expect(errorInfoReasons(grpcStatus(anonymous).detailsBin)).toEqual(["auth.missing"]);
    const admitted = await h2Request(wire.session, {
      path: GET_USER,
      headers: { "content-type": "application/grpc", "grpc-encoding": "gzip", authorization: `Bearer ${t.server.adminToken}` },
      body: framed,
    });
    expect(grpcStatus(admitted).code).toBe(INVALID_ARGUMENT);
  });

  it("the answer does not wait for the body: a call without a token is answered while its body is still coming", async () => {
    const url = new URL(t.server.url);
    const answer = await new Promise<{ status: number; reason: string | undefined }>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, method: "POST", path: GET_USER, headers: { "content-type": "application/json", "content-length": "1000000" }, agent: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => {
            resolve({ status: res.statusCode ?? 0, reason: jsonErrorReason(Buffer.concat(chunks)) });
            req.destroy();
          });
        },
      );
      req.on("error", reject);
      // Ten bytes of the million announced, and no more: only an answer that does not wait for the body comes back.
      req.write('{"userId":');
    });
    expect(answer).toEqual({ status: 401, reason: "auth.missing" });
  });

  it("REST: without a valid token nothing of the request is judged, neither its body nor its If-Match", async () => {
    const rest = (headers: Record<string, string>, body: string) =>
      http1Request(t.server.url, wire.agent, { method: "POST", path: "/v1/users/human", headers: { "content-type": "application/json", ...headers }, body });
    const anonymous = await rest({}, `{"userName":${"[".repeat(40)}`);
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.body.toString())).toMatchObject({ code: 16 });
    expect(jsonErrorReason(anonymous.body)).toBe("auth.missing");
    const unknown = await rest({ authorization: "Bearer gh1.nope.nope" }, "{not json");
    expect(unknown.status).toBe(401);
    // Nor its If-Match: a tag no route takes is the caller's mistake only once the caller is known.
    const update = await http1Request(t.server.url, wire.agent, { method: "PUT", path: "/v1/smtp", headers: { "content-type": "application/json", "if-match": "W/nope" }, body: "{}" });
    expect(update.status).toBe(401);
    const admittedUpdate = await http1Request(t.server.url, wire.agent, {
      method: "PUT",
      path: "/v1/smtp",
      headers: { "content-type": "application/json", "if-match": "W/nope", authorization: `Bearer ${t.server.adminToken}` },
      body: "{}",
    });
    expect(admittedUpdate.status).toBe(400);
    // With the token, the same body is judged.
    const admitted = await rest({ authorization: `Bearer ${t.server.adminToken}` }, `{"userName":${"[".repeat(40)}`);
    expect(admitted.status).toBe(400);
  });

  it("public services take at most 64 KiB, inflated: a health check's body is read before any caller is known", async () => {
    const within = await http1Request(t.server.url, wire.agent, { path: HEALTH, headers: { "content-type": "application/json" }, body: `{"service":"${"x".repeat(60 * 1024)}"}` });
    expect(jsonErrorReason(within.body)).not.toBe("request.too_large");
    const inflated = gzipSync(`{"service":"${"x".repeat(65 * 1024)}"}`);
    expect(inflated.byteLength).toBeLessThan(1024);
    const over = await http1Request(t.server.url, wire.agent, { path: HEALTH, headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: inflated });
    expect(over.status).toBe(429);
    expect(jsonErrorReason(over.body)).toBe("request.too_large");
    // A protected call takes the server's limit (4 MiB by default) from a caller it knows.
    const protectedCall = await connectJson(gzipSync(`{"userId":"${"x".repeat(65 * 1024)}"}`), { "content-encoding": "gzip", authorization: `Bearer ${t.server.adminToken}` });
    expect(jsonErrorReason(protectedCall.body)).not.toBe("request.too_large");
  });

  it("public services are not authenticated: a health check's malformed body is judged as before", async () => {
    const response = await http1Request(t.server.url, wire.agent, { path: HEALTH, headers: { "content-type": "application/json" }, body: "{not json" });
    expect(response.status).toBe(400);
    expect(jsonErrorReason(response.body)).toBe("request.malformed");
  });
});
