import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";
import { http1Request, jsonErrorReason } from "../fuzz/wire.js";

const t = useTestServer();
let agent: http.Agent;
beforeAll(() => {
  agent = new http.Agent({ keepAlive: true });
});
afterAll(() => agent.destroy());

const CREATE_OIDC_APP = "/gatehouse.admin.v1.ApplicationService/CreateOidcApplication";
const CREATE_HUMAN_USER = "/gatehouse.admin.v1.UserService/CreateHumanUser";

/** A JSON list of `count` copies of `item`, built as text (fast, and exactly what an attacker sends). */
const list = (item: string, count: number) => `[${new Array(count).fill(item).join(",")}]`;

/** A Connect JSON call with a valid token: without one its body would not even be read (test/transport/admission-rules.test.ts). */
async function anonymous(path: string, body: string) {
  const headers = { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` };
  const response = await http1Request(t.server.url, agent, { path, headers, body }, 30_000);
  const json = JSON.parse(response.body.toString()) as { code?: unknown; details?: { type: string; debug?: { fieldViolations?: unknown[] } }[] };
  const violations = json.details?.find((d) => d.type === "google.rpc.BadRequest")?.debug?.fieldViolations ?? [];
  return { status: response.status, code: json.code, reason: jsonErrorReason(response.body), violations, requestId: response.headers["x-request-id"] };
}

describe("a huge list of bad items is invalid_argument with ErrorInfo, never internal", () => {
  it.each([
    // As long as a list may be (json-shape.ts): every item is read and judged, and ten violations are named.
    ["responseTypes", CREATE_OIDC_APP, `{"projectId":"p","name":"n","responseTypes":${list('"X"', 10_000)}}`],
    ["grantTypes", CREATE_OIDC_APP, `{"projectId":"p","name":"n","grantTypes":${list('"X"', 10_000)}}`],
    ["idps", CREATE_HUMAN_USER, `{"userName":"u","idps":${list('{"q":1}', 10_000)}}`],
  ])("Connect JSON %s: 400 request.malformed, at most ten violations, a warning without a stack", async (_field, path, body) => {
    const result = await anonymous(path, body);
    expect(result).toMatchObject({ status: 400, code: "invalid_argument", reason: "request.malformed" });
    expect(result.violations.length).toBeGreaterThan(0);
    expect(result.violations.length).toBeLessThanOrEqual(10);
    const logged = t.server.logs.parsed().filter((line) => line.requestId === result.requestId);
    expect(logged).toEqual([expect.objectContaining({ level: 40, reason: "request.malformed" })]);
    expect(JSON.stringify(logged)).not.toContain('"stack"');
  });

  it("the REST route POST /v1/users/human: 400 in the SPEC body with ErrorInfo", async () => {
    const body = `{"userName":"u","idps":${list('{"q":1}', 200_000)}}`;
    const headers = { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` };
    const response = await http1Request(t.server.url, agent, { path: "/v1/users/human", headers, body }, 30_000);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString())).toMatchObject({ code: 3 });
    expect(jsonErrorReason(response.body)).toBe("request.malformed");
  });

  it("four 4 MB lists at once are each refused with ErrorInfo, and /healthz is served while they run", async () => {
    const body = `{"projectId":"p","name":"n","responseTypes":${list('"X"', 1_000_000)}}`;
    expect(body.length).toBeLessThan(4 * 1024 * 1024);
    const calls = Array.from({ length: 4 }, () => anonymous(CREATE_OIDC_APP, body));
    const health = await http1Request(t.server.url, agent, { method: "GET", path: "/healthz" });
    expect(health.status).toBe(200);
    for (const result of await Promise.all(calls)) {
      expect(result).toMatchObject({ status: 400, code: "invalid_argument", reason: "request.malformed" });
      expect(result.violations.length).toBeLessThanOrEqual(10);
    }
  });
});
