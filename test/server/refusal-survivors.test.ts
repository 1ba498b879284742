import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

// A request the transport refuses before its RPC runs (server.ts createRejection) is still counted and logged like
// every call: one sample of gatehouse_rpc_calls_total with its procedure and code, and one warning carrying the
// request id the caller got in x-request-id, so the answer can be found in the log.
const t = useTestServer();
const PROCEDURE = "/gatehouse.admin.v1.OrganizationService/CreateOrganization";

describe("a request refused before its RPC", () => {
  it("is one rpc_calls sample with its procedure and code, and one warning under the caller's request id", async () => {
    const response = await fetch(`${t.server.url}${PROCEDURE}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}`, "x-request-id": "refused-call-1" },
      body: '{"name": "x", "name": "y"}',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("x-request-id")).toBe("refused-call-1");
    const warning = t.server.logs.parsed().find((line) => line.msg === "request refused before the rpc" && line.requestId === "refused-call-1");
    expect(warning).toMatchObject({ level: 40, procedure: PROCEDURE, code: "invalid_argument", reason: "request.duplicate_key", protocol: "connect" });
    const metrics = await (await fetch(`${t.server.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`gatehouse_rpc_calls_total\\{[^}]*procedure="${PROCEDURE}"[^}]*code="invalid_argument"[^}]*\\} [1-9]`));
  });
});

describe("documents served outside the RPCs", () => {
  it("GET /openapi.json is JSON; GET /metrics is the Prometheus text format", async () => {
    const openapi = await fetch(`${t.server.url}/openapi.json`);
    expect(openapi.headers.get("content-type")).toBe("application/json");
    expect(((await openapi.json()) as { openapi: string }).openapi).toBe("3.1.0");
    const metrics = await fetch(`${t.server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("POST to them is no document: 404 route.not_found", async () => {
    for (const path of ["/openapi.json", "/metrics"]) {
      const response = await fetch(`${t.server.url}${path}`, { method: "POST" });
      expect(response.status).toBe(404);
    }
  });
});
