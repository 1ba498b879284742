import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

// CORS (src/cors.ts): only the configured origins get CORS headers; a preflight (OPTIONS with
// Access-Control-Request-Method) from one is answered 204 by the server itself, with the methods the REST routes and
// RPCs use, the headers clients send, how long the browser may cache it, and the request id; answers vary by Origin.
const ALLOWED = "https://admin.example.com";
const t = useTestServer({ config: { corsOrigins: [ALLOWED, "http://localhost:3000"] } });
const RPC = "/gatehouse.admin.v1.InstanceService/GetInstance";

function preflight(path: string, headers: Record<string, string>) {
  return fetch(`${t.server.url}${path}`, { method: "OPTIONS", headers });
}

describe("a preflight from an allowed origin", () => {
  it("is answered 204 with the methods of the REST routes and RPCs, a cache lifetime, Vary: Origin and the request id", async () => {
    const response = await preflight("/v1/smtp", { origin: ALLOWED, "access-control-request-method": "PUT", "x-request-id": "cors-preflight-1" });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    const methods = (response.headers.get("access-control-allow-methods") ?? "").split(",").map((m) => m.trim());
    expect(methods).toEqual(expect.arrayContaining(["GET", "POST", "PUT"]));
    expect(Number(response.headers.get("access-control-max-age"))).toBeGreaterThan(0);
    expect(response.headers.get("vary")).toMatch(/\bOrigin\b/);
    expect(response.headers.get("x-request-id")).toBe("cors-preflight-1");
  });

  it("each allowed origin is named back as itself", async () => {
    const response = await preflight(RPC, { origin: "http://localhost:3000", "access-control-request-method": "POST" });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
  });
});

describe("what is no preflight", () => {
  it("an OPTIONS without Access-Control-Request-Method goes on to the server's own answer, with the CORS headers of the origin", async () => {
    const response = await preflight(RPC, { origin: ALLOWED });
    expect(response.status).not.toBe(204);
    expect(response.headers.get("access-control-allow-methods")).toBeNull();
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
  });

  it("an actual call from an allowed origin is answered by its RPC, varying by Origin", async () => {
    const response = await fetch(`${t.server.url}${RPC}`, {
      method: "POST",
      headers: { origin: ALLOWED, "access-control-request-method": "POST", "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
      body: "{}",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-methods")).toBeNull();
    expect(response.headers.get("vary")).toMatch(/\bOrigin\b/);
  });

  it("a request without Origin, or from another origin, gets no CORS headers", async () => {
    for (const headers of [{}, { origin: "https://evil.example" }, { origin: "" }] as Record<string, string>[]) {
      const response = await preflight(RPC, { ...headers, "access-control-request-method": "POST" });
      expect(response.status).not.toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
      expect(response.headers.get("vary")).toBeNull();
    }
  });
});
