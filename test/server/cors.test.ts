import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { useTestServer } from "../support/server.js";

const ALLOWED = "https://admin.example.com";
const t = useTestServer({ config: { corsOrigins: [ALLOWED] } });
const path = "/gatehouse.admin.v1.InstanceService/GetInstance";

describe("CORS for browser clients", () => {
  it("answers a preflight from an allowed origin with the Connect and gRPC-web headers", async () => {
    const response = await fetch(`${t.server.url}${path}`, {
      method: "OPTIONS",
      headers: { origin: ALLOWED, "access-control-request-method": "POST", "access-control-request-headers": "content-type,x-grpc-web,authorization" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(response.headers.get("access-control-allow-headers")).toMatch(/X-Grpc-Web/);
    expect(response.headers.get("access-control-allow-headers")).toMatch(/Authorization/);
  });

  it("lets the browser read gRPC-web status headers on the actual call", async () => {
    const response = await fetch(`${t.server.url}${path}`, {
      method: "POST",
      headers: { origin: ALLOWED, "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
      body: "{}",
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(response.headers.get("access-control-expose-headers")).toMatch(/Grpc-Status-Details-Bin/);
  });

  it("lets a browser send If-Match and read ETag: REST optimistic concurrency across origins", async () => {
    const preflight = await fetch(`${t.server.url}/v1/smtp`, {
      method: "OPTIONS",
      headers: { origin: ALLOWED, "access-control-request-method": "PUT", "access-control-request-headers": "if-match,authorization" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")?.split(", ")).toContain("If-Match");
    const response = await fetch(`${t.server.url}${path}`, {
      method: "POST",
      headers: { origin: ALLOWED, "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
      body: "{}",
    });
    expect(response.headers.get("access-control-expose-headers")?.split(", ")).toContain("ETag");
  });

  it("grants nothing to other origins", async () => {
    const response = await fetch(`${t.server.url}${path}`, { method: "OPTIONS", headers: { origin: "https://evil.example", "access-control-request-method": "POST" } });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    expect(response.status).not.toBe(204);
  });

  it("takes a comma-separated list of origins and refuses anything else", () => {
    expect(loadConfig([], { GATEHOUSE_CORS_ORIGINS: "https://a.example.com, http://localhost:3000" }).corsOrigins).toEqual(["https://a.example.com", "http://localhost:3000"]);
    expect(loadConfig([], {}).corsOrigins).toEqual([]);
    expect(() => loadConfig([], { GATEHOUSE_CORS_ORIGINS: "https://a.example.com/path" })).toThrow(/not an origin/);
    expect(() => loadConfig([], { GATEHOUSE_CORS_ORIGINS: "*" })).toThrow(/not an origin/);
  });
});
