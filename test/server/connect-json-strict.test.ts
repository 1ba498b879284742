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

interface ConnectErrorBody {
  code: string;
  message: string;
  details?: { type: string; debug?: { reason?: string; fieldViolations?: { field: string; reason: string }[] } }[];
}

async function connectJson(path: string, body: unknown) {
  const response = await http1Request(t.server.url, agent, {
    path,
    headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
    body: JSON.stringify(body),
  });
  const json = JSON.parse(response.body.toString()) as ConnectErrorBody;
  const info = json.details?.find((d) => d.type === "google.rpc.ErrorInfo")?.debug;
  const violations = json.details?.find((d) => d.type === "google.rpc.BadRequest")?.debug?.fieldViolations ?? [];
  return { status: response.status, json, reason: info?.reason, violations, requestId: response.headers["x-request-id"] };
}

async function rest(method: string, path: string, body: unknown) {
  const response = await http1Request(t.server.url, agent, {
    method,
    path,
    headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}` },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: JSON.parse(response.body.toString()) as { code: number; details: Record<string, unknown>[] } };
}

const UPDATE_IDP = "/gatehouse.admin.v1.IdentityProviderService/UpdateIdentityProvider";

describe("Connect JSON refuses what it does not understand (invalid_argument naming it)", () => {
  it("an unknown enum name: stylingType NOPE is not silently STYLING_TYPE_UNSPECIFIED", async () => {
    const result = await connectJson(UPDATE_IDP, { idpId: "any", name: "n", stylingType: "NOPE" });
    expect(result.status).toBe(400);
    expect(result.json.code).toBe("invalid_argument");
    expect(result.reason).toBe("request.malformed");
    expect(result.violations).toEqual([expect.objectContaining({ field: "stylingType", reason: "json.unknown_enum_value" })]);
    expect(result.json.message).toContain("NOPE");
    expect(result.requestId).toMatch(/.+/);
  });

  it("an unknown field, also nested, named by its path", async () => {
    const top = await connectJson(UPDATE_IDP, { idpId: "any", name: "n", colour: "blue" });
    expect(top.status).toBe(400);
    expect(top.violations).toEqual([expect.objectContaining({ field: "colour", reason: "json.unknown_field" })]);
    const nested = await connectJson("/gatehouse.admin.v1.UserService/CreateHumanUser", { userName: "u", profile: { firstName: "a", lastName: "b", shoeSize: 9 } });
    expect(nested.status).toBe(400);
    expect(nested.violations).toEqual([expect.objectContaining({ field: "profile.shoeSize", reason: "json.unknown_field" })]);
  });

  it.each(["2026-02-30T00:00:00Z", "2027-02-29T12:00:00Z", "2026-04-31T00:00:00+02:00"])("a Timestamp on a day that does not exist (%s) is refused, not rolled over", async (date) => {
    const result = await connectJson("/gatehouse.admin.v1.UserService/AddPersonalAccessToken", { userId: "any", expirationDate: date });
    expect(result.status).toBe(400);
    expect(result.violations).toEqual([expect.objectContaining({ field: "expirationDate", reason: "json.timestamp_date" })]);
  });

  it("a Timestamp with more than nine fractional digits is refused", async () => {
    const result = await connectJson("/gatehouse.admin.v1.UserService/AddPersonalAccessToken", { userId: "any", expirationDate: "2030-01-01T00:00:00.1234567890Z" });
    expect(result.status).toBe(400);
    expect(result.reason).toBe("request.malformed");
  });

  it("a real leap day still passes the decoder (the RPC then answers on its own terms)", async () => {
    const result = await connectJson("/gatehouse.admin.v1.UserService/AddPersonalAccessToken", { userId: "no-such-user", expirationDate: "2028-02-29T00:00:00Z" });
    expect(result.reason).not.toBe("request.malformed");
  });

  it("the REST route of the same RPC refuses the same body the same way", async () => {
    const result = await rest("PUT", "/v1/idps/any", { name: "n", stylingType: "NOPE" });
    expect(result.status).toBe(400);
    expect(result.json.code).toBe(3);
    expect(result.json.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "request.malformed" }),
        expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [expect.objectContaining({ field: "stylingType" })] }),
      ]),
    );
  });
});
