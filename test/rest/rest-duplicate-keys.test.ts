import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";
import { http1Request } from "../fuzz/wire.js";

const t = useTestServer();
let agent: http.Agent;
beforeAll(() => {
  agent = new http.Agent({ keepAlive: true });
});
afterAll(() => agent.destroy());

async function rest(method: string, path: string, body: string) {
  const response = await http1Request(t.server.url, agent, {
    method,
    path,
    headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
    body,
  });
  return { status: response.status, json: JSON.parse(response.body.toString()) as { code: number; details: Record<string, unknown>[] } };
}

describe("REST: a body with a duplicate key is refused, not read as its last value", () => {
  it("POST /v1/users/human with userName twice: 400, code 3, ErrorInfo request.duplicate_key naming the key", async () => {
    const body = '{"userName":"first-name","userName":"second-name","profile":{"firstName":"A","lastName":"B"},"email":{"email":"dup@example.com"}}';
    const result = await rest("POST", "/v1/users/human", body);
    expect(result.status).toBe(400);
    expect(result.json.code).toBe(3);
    expect(result.json.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "request.duplicate_key", metadata: { key: "userName" } }),
        expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [expect.objectContaining({ field: "userName" })] }),
      ]),
    );
    // The same body without the duplicate is accepted: the refusal was the duplicate, nothing else.
    const accepted = await rest("POST", "/v1/users/human", body.replace('"userName":"first-name",', ""));
    expect(accepted.status).toBe(200);
  });

  it("a nested duplicate (profile.firstName) is named by its path", async () => {
    const result = await rest("POST", "/v1/users/human", '{"userName":"nested","profile":{"firstName":"A","firstName":"C","lastName":"B"},"email":{"email":"n@example.com"}}');
    expect(result.status).toBe(400);
    expect(result.json.details).toEqual(expect.arrayContaining([expect.objectContaining({ reason: "request.duplicate_key", metadata: { key: "profile.firstName" } })]));
  });
});
