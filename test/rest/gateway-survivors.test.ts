import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { useTestServer } from "../support/server.js";

// REST transcoding (src/rest/gateway.ts): a route with `body: "*"` (every route of the six SPEC operations) takes
// the whole request message from the JSON object in the body; the URL's query parameters are no part of it
// (google.api.http: with "*" there are no URL query parameters). A body that is JSON but no object is the caller's
// mistake: 400 invalid_argument, ErrorInfo request.malformed. A request target that is no URL is 404, never internal.
const t = useTestServer();

interface SpecBody {
  code: number;
  message: string;
  details: { "@type": string; reason?: string; domain?: string }[];
}

async function rest(method: string, path: string, body: string) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
    body,
  });
  return { status: response.status, json: (await response.json()) as SpecBody & Record<string, unknown> };
}
const reasonOf = (body: SpecBody) => body.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo")?.reason;
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;
const newUser = (userName: string) => ({ userName, profile: { firstName: "Query", lastName: "Ignored" }, email: { email: `${userName}@example.com` } });

describe("a REST body that is JSON but no object", () => {
  it.each([["[]"], ['[{"userName": "x"}]'], ['"a string"'], ["42"], ["true"], ["null"]])("%s is 400 invalid_argument, request.malformed", async (body) => {
    const response = await rest("POST", "/v1/users/human", body);
    expect(response.status).toBe(400);
    expect(response.json.code).toBe(3);
    expect(response.json.message).toBe("the body must be a JSON object");
    expect(reasonOf(response.json)).toBe("request.malformed");
  });
});

describe("query parameters on a route whose body is the whole message", () => {
  it("are ignored: the body's fields are used, and a query key that names no field is no error", async () => {
    const userName = unique("gw-body");
    const response = await rest("POST", `/v1/users/human?userName=${unique("gw-query")}&user_name=${unique("gw-query")}&noSuchField=1`, JSON.stringify(newUser(userName)));
    expect(response.status).toBe(200);
    const userId = response.json.userId as string;
    const { user } = await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken }).getUser({ userId });
    expect(user?.userName).toBe(userName);
  });
});

describe("a request target that is no URL", () => {
  it.each([["GET"], ["POST"]])("%s // is 404 route.not_found, never an internal error", async (method) => {
    const response = await fetch(`${t.server.url}//`, { method, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}), signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(404);
    const json = (await response.json()) as SpecBody;
    expect(json.code).toBe(5);
    expect(reasonOf(json)).toBe("route.not_found");
    expect(t.server.logs.text).not.toContain("internal error in REST gateway");
  });
});
