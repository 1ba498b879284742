import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

// Probes for load balancers and Kubernetes: plain HTTP, no token. And every HTTP response carries
// an x-request-id, so any answer an operator sees can be found in the log.
const ORIGIN = "https://admin.example.com";
const t = useTestServer({ config: { corsOrigins: [ORIGIN] } });

interface Answer {
  status: number;
  body: string;
  requestId: string | undefined;
}

async function overHttp1(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const response = await fetch(`${t.server.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  return { status: response.status, body: await response.text(), requestId: response.headers.get("x-request-id") ?? undefined };
}

async function overHttp2(method: string, path: string): Promise<Answer> {
  const session = http2.connect(t.server.url);
  try {
    return await new Promise<Answer>((resolve, reject) => {
      const stream = session.request({ ":method": method, ":path": path });
      let status = 0;
      let requestId: string | undefined;
      let body = "";
      stream.on("response", (headers) => {
        status = Number(headers[":status"]);
        requestId = headers["x-request-id"] as string | undefined;
      });
      stream.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      stream.on("end", () => resolve({ status, body, requestId }));
      stream.on("error", reject);
      stream.end();
    });
  } finally {
    session.close();
  }
}

describe("GET and HEAD /healthz and /readyz", () => {
  it.each([
    ["HTTP/1.1", overHttp1],
    ["HTTP/2", overHttp2],
  ] as const)("over %s answer 200 without a token (ok / empty for HEAD), with x-request-id", async (_name, call) => {
    for (const path of ["/healthz", "/readyz"]) {
      expect(await call("GET", path)).toEqual({ status: 200, body: "ok\n", requestId: expect.stringMatching(/.+/) as unknown });
      expect(await call("HEAD", path)).toEqual({ status: 200, body: "", requestId: expect.stringMatching(/.+/) as unknown });
    }
  });

  it("other methods on them are not probes (no 200)", async () => {
    expect((await overHttp1("POST", "/healthz")).status).not.toBe(200);
  });
});

describe("x-request-id on every HTTP response", () => {
  it.each([
    ["GET", "/healthz", 200],
    ["GET", "/readyz", 200],
    ["GET", "/metrics", 200],
    ["GET", "/openapi.json", 200],
    ["GET", "/no/such/path", 404],
    ["POST", "/gatehouse.admin.v1.NoSuchService/Nothing", 404],
    ["PUT", "/v1/smtp", 401],
  ])("%s %s → %i", async (method, path, status) => {
    const http1 = await overHttp1(method, path, method === "PUT" ? { "content-type": "application/json" } : {});
    const h2 = await overHttp2(method, path);
    expect([http1.status, h2.status]).toEqual([status, status]);
    expect(http1.requestId).toMatch(/.+/);
    expect(h2.requestId).toMatch(/.+/);
    expect(http1.requestId).not.toBe(h2.requestId);
  });

  it("an RPC refused for a missing token", async () => {
    const answer = await overHttp1("POST", "/gatehouse.admin.v1.InstanceService/GetInstance", { "content-type": "application/json" }, "{}");
    expect(answer.status).toBe(401);
    expect(answer.requestId).toMatch(/.+/);
  });

  // Known gap (reported): withCors (src/cors.ts) answers a preflight itself, before the adapter that
  // sets x-request-id. Flip to `it` once the preflight answer carries it.
  it("a CORS preflight answer", async () => {
    const answer = await overHttp1("OPTIONS", "/gatehouse.admin.v1.InstanceService/GetInstance", { origin: ORIGIN, "access-control-request-method": "POST" });
    expect(answer.status).toBe(204);
    expect(answer.requestId).toMatch(/.+/);
  });
});
