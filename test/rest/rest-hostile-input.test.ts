import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";
import { h2Request, http1Request, type WireResponse, useWireConnections } from "../fuzz/wire.js";

const t = useTestServer({ config: { maxRequestBytes: 4096 } });
const wire = useWireConnections(() => t.server);

interface SpecBody {
  code: number;
  message: string;
  details: { "@type": string; reason?: string; domain?: string; fieldViolations?: { field: string }[] }[];
}

function spec(response: WireResponse): SpecBody & { reason?: string } {
  expect(response.headers["content-type"]).toMatch(/^application\/json/);
  const body = JSON.parse(response.body.toString()) as SpecBody;
  const info = body.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo");
  expect(info?.domain).toBe("gatehouse");
  expect(response.headers["x-request-id"]).toMatch(/.+/);
  return { ...body, reason: info?.reason };
}

const send = (request: Parameters<typeof http1Request>[2]) => http1Request(t.server.url, wire.agent, request);

describe("REST paths and fallback answers under hostile input", () => {
  // With a token: without one, nothing of a REST request is read (test/transport/admission-rules.test.ts).
  it("a malformed percent-escape in a path parameter (PUT /v1/idps/%ZZ) is 400 with the SPEC body", async () => {
    for (const path of ["/v1/idps/%ZZ", "/v1/idps/%E0%A4%A", "/v1/idps/%C0%80"]) {
      const response = await send({ method: "PUT", path, headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` }, body: "{}" });
      expect(response.status, path).toBe(400);
      const body = spec(response);
      expect(body.code).toBe(3);
      expect(body.reason).toBe("request.malformed");
      expect(body.details).toEqual(expect.arrayContaining([expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [expect.objectContaining({ field: "idp_id" })] })]));
    }
  });

  it("404 for no route: ErrorInfo route.not_found and x-request-id, the path cut short", async () => {
    const response = await send({ method: "GET", path: `/nowhere/${"a".repeat(5000)}` });
    expect(response.status).toBe(404);
    const body = spec(response);
    expect(body.reason).toBe("route.not_found");
    expect(body.message.length).toBeLessThan(300);
  });

  it("405 on a REST path and on an RPC path (GET, PUT): ErrorInfo and x-request-id", async () => {
    const restPath = await send({ method: "DELETE", path: "/v1/smtp" });
    expect(restPath.status).toBe(405);
    expect(spec(restPath).reason).toBe("http.method_not_allowed");
    for (const method of ["GET", "PUT"]) {
      const rpcPath = await send({ method, path: "/gatehouse.admin.v1.UserService/GetUser", headers: { "content-type": "application/json" } });
      expect(rpcPath.status).toBe(405);
      expect(spec(rpcPath).reason).toBe("http.method_not_allowed");
    }
  });

  it("415 for a content type no protocol speaks: ErrorInfo and x-request-id", async () => {
    const response = await send({ path: "/gatehouse.admin.v1.UserService/GetUser", headers: { "content-type": "text/plain" }, body: "hello" });
    expect(response.status).toBe(415);
    expect(spec(response).reason).toBe("http.unsupported_media_type");
  });

  it("malformed JSON on a REST route and on a Connect route: 400 with ErrorInfo", async () => {
    const restRoute = await send({ method: "PUT", path: "/v1/smtp", headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` }, body: "{nope" });
    expect(restRoute.status).toBe(400);
    expect(spec(restRoute).reason).toBe("request.malformed");
    const connect = await send({ path: "/gatehouse.admin.v1.SmtpService/GetSmtpConfig", headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` }, body: "{nope" });
    expect(connect.status).toBe(400);
    expect(connect.body.toString()).toContain("request.malformed");
    expect(connect.headers["x-request-id"]).toMatch(/.+/);
  });

  it("the size limit on a REST route, a Connect route and an HTTP/2 gRPC route: resource_exhausted with ErrorInfo", async () => {
    const big = JSON.stringify({ senderName: "x".repeat(10_000) });
    const restRoute = await send({ method: "PUT", path: "/v1/smtp", headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` }, body: big });
    expect(restRoute.status).toBe(429);
    expect(spec(restRoute).reason).toBe("request.too_large");
    const connect = await send({ path: "/gatehouse.admin.v1.SmtpService/UpdateSmtpConfig", headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` }, body: big });
    expect(connect.status).toBe(429);
    expect(connect.body.toString()).toContain("request.too_large");
    const h2 = await h2Request(wire.session, { path: "/gatehouse.admin.v1.SmtpService/UpdateSmtpConfig", headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` }, body: big });
    expect(h2.status).toBe(429);
    expect(h2.headers["x-request-id"]).toMatch(/.+/);
  });

  it("an unexpected request id is replaced, a well-formed one is echoed on fallback answers", async () => {
    const echoed = await send({ method: "GET", path: "/nowhere", headers: { "x-request-id": "trace-123" } });
    expect(echoed.headers["x-request-id"]).toBe("trace-123");
    const replaced = await send({ method: "GET", path: "/nowhere", headers: { "x-request-id": "bad id with spaces" } });
    // Replaced, not dropped: a fresh id of the server's own (an absent header passed the old check).
    expect(replaced.headers["x-request-id"]).toMatch(/^\S+$/);
    expect(replaced.headers["x-request-id"]).not.toBe("bad id with spaces");
  });
});
