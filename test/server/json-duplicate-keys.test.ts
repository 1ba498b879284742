import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { duplicateKeyPath } from "../../src/transport/json-duplicate-keys.js";
import { useTestServer } from "../support/server.js";
import { http1Request } from "../fuzz/wire.js";

describe("duplicateKeyPath finds a key an object has twice, at any depth", () => {
  it.each([
    ['{"userId":"x","userId":"y"}', "userId"],
    ['{"profile":{"firstName":"a","lastName":"b","firstName":"c"}}', "profile.firstName"],
    ['{"idps":[{"configId":"a"},{"configId":"b","configId":"c"}]}', "idps[1].configId"],
    ['{"a":[[1,2],[{"k":1,"k":2}]]}', "a[1][0].k"],
    ['{"name":"x","na\\u006de":"y"}', "name"],
  ])("%s → %s", (text, path) => {
    expect(duplicateKeyPath(text)).toBe(path);
  });

  it.each([
    '{"userId":"x"}',
    '{"idps":[{"configId":"a"},{"configId":"b"}]}',
    '{"a":{"k":1},"b":{"k":1}}',
    '{"a":"\\"a\\":1, \\"a\\":2","b":["a","a"]}',
    '{"a":"{\\"x\\":1,\\"x\\":2}"}',
  ])("%s has none", (text) => {
    expect(duplicateKeyPath(text)).toBeUndefined();
  });
});

const t = useTestServer();
let agent: http.Agent;
beforeAll(() => {
  agent = new http.Agent({ keepAlive: true });
});
afterAll(() => agent.destroy());

interface ConnectErrorJson {
  code: string;
  details?: { type: string; debug?: { reason?: string; metadata?: Record<string, string>; fieldViolations?: { field: string; reason: string }[] } }[];
}

async function connectJson(path: string, body: string, token?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await http1Request(t.server.url, agent, { path, headers, body });
  const json = JSON.parse(response.body.toString()) as ConnectErrorJson;
  return {
    status: response.status,
    code: json.code,
    info: json.details?.find((d) => d.type === "google.rpc.ErrorInfo")?.debug,
    violations: json.details?.find((d) => d.type === "google.rpc.BadRequest")?.debug?.fieldViolations,
  };
}

describe("Connect JSON: a duplicate key is invalid_argument request.duplicate_key with ErrorInfo naming it", () => {
  it("with a token (without one the body is not read: unauthenticated)", async () => {
    expect(await connectJson("/gatehouse.admin.v1.UserService/GetUser", '{"userId":"x","userId":"y"}')).toMatchObject({ status: 401, code: "unauthenticated" });
    const result = await connectJson("/gatehouse.admin.v1.UserService/GetUser", '{"userId":"x","userId":"y"}', t.server.adminToken);
    expect(result).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(result.info).toMatchObject({ reason: "request.duplicate_key", metadata: { key: "userId" } });
    expect(result.violations).toEqual([expect.objectContaining({ field: "userId", reason: "json.duplicate_key" })]);
  });

  it("deep inside a list of messages, named by its path", async () => {
    const body = '{"userName":"dup","profile":{"firstName":"a","lastName":"b"},"email":{"email":"d@example.com"},"idps":[{"configId":"c","externalUserId":"e","externalUserId":"f"}]}';
    const result = await connectJson("/gatehouse.admin.v1.UserService/CreateHumanUser", body, t.server.adminToken);
    expect(result).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(result.info).toMatchObject({ reason: "request.duplicate_key", metadata: { key: "idps[0].externalUserId" } });
  });
});
