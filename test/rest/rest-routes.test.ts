import { beforeAll, describe, expect, it } from "vitest";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";

const t = useTestServer({ config: { maxRequestBytes: 16 * 1024 } });
let world: World;

beforeAll(async () => {
  world = await buildWorld(t.clients, t.server.adminToken, "rest");
});

interface SpecBody {
  code: number;
  message: string;
  details: { "@type": string; reason?: string; fieldViolations?: { field: string }[] }[];
}

async function rest(method: string, path: string, body?: unknown, options: { token?: string | null; orgId?: string; raw?: string } = {}) {
  const token = options.token === undefined ? t.server.adminToken : options.token;
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(options.orgId ? { "x-service-orgid": options.orgId } : {}),
    },
    ...(options.raw !== undefined ? { body: options.raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, headers: response.headers, json: (await response.json()) as Record<string, unknown> & SpecBody };
}
const reasonOf = (body: SpecBody) => body.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo")?.reason;

describe("REST routes of the six SPEC operations (API.md table)", () => {
  it("POST /v1/users/human creates a user; POST /v1/users/{user_id}/email/verify verifies the email", async () => {
    const created = await rest("POST", "/v1/users/human", { userName: "rest-ada", profile: { firstName: "Ada", lastName: "L" }, email: { email: "rest-ada@example.com" } });
    expect(created.status).toBe(200);
    const userId = created.json.userId as string;
    const { verificationCode } = await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken }).resendEmailCode({ userId, returnCode: true });
    const wrong = await rest("POST", `/v1/users/${userId}/email/verify`, { verificationCode: "ZZZZZZ" });
    expect(wrong.status).toBe(400);
    expect(reasonOf(wrong.json)).toBe("email_code.invalid");
    const verified = await rest("POST", `/v1/users/${userId}/email/verify`, { verificationCode });
    expect(verified.status).toBe(200);
    expect(verified.json.details).not.toHaveProperty("creationDate");
  });

  it("PUT /v1/smtp updates the SMTP configuration (404 before it exists, 403 for non-IAM_OWNER)", async () => {
    const smtp = { senderAddress: "noreply@example.com", senderName: "Gatehouse", host: "mail.example.com:587" };
    expect((await rest("PUT", "/v1/smtp", smtp)).status).toBe(404);
    const owner = await createActor(t.clients, t.server.adminToken, world.orgA, "rest-org-owner", ["ORG_OWNER"]);
    expect((await rest("PUT", "/v1/smtp", smtp, { token: owner.token })).status).toBe(403);
  });

  it("PUT /v1/idps/{idp_id} updates the IDP and carries the Deprecation header", async () => {
    const response = await rest("PUT", `/v1/idps/${world.idpId}`, { name: "REST SSO" }, { orgId: world.orgA });
    expect(response.status).toBe(200);
    expect(response.headers.get("deprecation")).toBe("@1767225600");
    expect(response.headers.get("x-request-id")).toMatch(/.+/);
  });

  it("POST /v1/projects/{project_id}/grants/{grant_id}/members adds a member (409 the second time)", async () => {
    const user = await createActor(t.clients, t.server.adminToken, world.orgB, "rest-member");
    const path = `/v1/projects/${world.p1}/grants/${world.g1}/members`;
    expect((await rest("POST", path, { userId: user.userId, roles: ["PROJECT_GRANT_OWNER"] }, { orgId: world.orgA })).status).toBe(200);
    const again = await rest("POST", path, { userId: user.userId }, { orgId: world.orgA });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe(6);
    expect(reasonOf(again.json)).toBe("member.already_exists");
  });

  it("PUT /v1/projects/{project_id}/apps/{app_id} renames an app; the path wins over the body", async () => {
    const response = await rest("PUT", `/v1/projects/${world.p1}/apps/${world.appId}`, { name: "REST app", appId: "ignored", projectId: "ignored" }, { orgId: world.orgA });
    expect(response.status).toBe(200);
    const missing = await rest("PUT", `/v1/projects/${world.p1}/apps/no-such-app`, { name: "x" }, { orgId: world.orgA });
    expect(missing.status).toBe(404);
    expect(reasonOf(missing.json)).toBe("application.not_found");
  });
});

describe("REST errors use the SPEC section 7 body and the API.md statuses", () => {
  it("400 with BadRequest field violations for invalid input", async () => {
    const response = await rest("POST", "/v1/users/human", { userName: "", profile: { firstName: "A", lastName: "B" }, email: { email: "x@example.com" } });
    expect(response.status).toBe(400);
    expect(response.json.code).toBe(3);
    const badRequest = response.json.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest");
    expect(badRequest?.fieldViolations?.map((v) => v.field)).toEqual(["user_name"]);
  });

  it("401 without a token", async () => {
    const response = await rest("POST", "/v1/users/human", {}, { token: null });
    expect(response.status).toBe(401);
    expect(response.json).toMatchObject({ code: 16 });
    expect(reasonOf(response.json)).toBe("auth.missing");
  });

  it("400 for malformed JSON, 429 for an oversized body", async () => {
    const malformed = await rest("POST", "/v1/users/human", undefined, { raw: '{"userName": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.json.code).toBe(3);
    const oversized = await rest("POST", "/v1/users/human", { userName: "x".repeat(20_000) });
    expect(oversized.status).toBe(429);
    expect(oversized.json.code).toBe(8);
  });

  it("405 with Allow for a wrong method, 404 with the same body shape for an unknown route", async () => {
    const wrongMethod = await rest("GET", "/v1/users/human");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("POST");
    expect(wrongMethod.json).toMatchObject({ code: 12 });
    expect(reasonOf(wrongMethod.json)).toBe("http.method_not_allowed");
    const unknown = await rest("POST", "/v1/nowhere", {});
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ code: 5 });
    expect(reasonOf(unknown.json)).toBe("route.not_found");
  });
});
