import { beforeAll, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { createLoginClient } from "../support/login-client.js";
import { useTestServer } from "../support/server.js";
import type { Actor } from "../support/world.js";

/**
 * The REST routes of the password RPCs (google.api.http in user.proto and instance.proto): the same RPCs, errors in the
 * SPEC body, ETag and If-Match where the call takes expected_sequence.
 */
const t = useTestServer();
let orgId: string;
let loginClient: Actor;

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: "Password REST" }));
  loginClient = await createLoginClient(t, orgId, "rest-login-client");
});

async function rest(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "x-service-orgid": orgId, ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, etag: response.headers.get("etag"), json: (await response.json()) as Record<string, unknown> };
}
const reasonOf = (json: Record<string, unknown>) => (json.details as { reason?: string }[] | undefined)?.find((d) => d.reason)?.reason;

describe("password routes", () => {
  it("POST /v1/users/{user_id}/password sets it (If-Match honoured); POST /v1/users/password/verify checks it", async () => {
    const { userId } = await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId }).createHumanUser({
      userName: "rest-signer",
      profile: { firstName: "Rest", lastName: "Signer" },
      email: { email: "rest-signer@example.com", isEmailVerified: true },
    });
    const stale = await rest("POST", `/v1/users/${userId}/password`, t.server.adminToken, { password: "Rest-Password-1" }, { "if-match": '"1"' });
    expect(stale.status).toBe(412);
    expect(reasonOf(stale.json)).toBe("concurrent_modification");
    const set = await rest("POST", `/v1/users/${userId}/password`, t.server.adminToken, { password: "Rest-Password-1", changeRequired: true });
    expect(set.status).toBe(200);
    expect(set.etag).toBe(`"${(set.json.details as { sequence: string }).sequence}"`);

    const right = await rest("POST", "/v1/users/password/verify", loginClient.token, { loginName: "REST-SIGNER", password: "Rest-Password-1" });
    expect(right.status).toBe(200);
    expect(right.json.passwordChangeRequired).toBe(true);
    const wrong = await rest("POST", "/v1/users/password/verify", loginClient.token, { userId, password: "nope" });
    expect({ status: wrong.status, code: wrong.json.code, reason: reasonOf(wrong.json) }).toEqual({ status: 400, code: 3, reason: "password.invalid" });
    const both = await rest("POST", "/v1/users/password/verify", loginClient.token, { userId, loginName: "rest-signer", password: "nope" });
    expect(both.status).toBe(400);
    // Both members of the oneof: the JSON itself is refused, before validation.
    expect(reasonOf(both.json)).toBe("request.malformed");
  });

  it("GET and PUT /v1/policies/lockout read and replace the policy; the login client gets 403", async () => {
    const read = await rest("GET", "/v1/policies/lockout", t.server.adminToken);
    expect(read.status).toBe(200);
    expect(read.json.maxPasswordAttempts).toBe(10);
    const put = await rest("PUT", "/v1/policies/lockout", t.server.adminToken, { maxPasswordAttempts: 7 }, { "if-match": read.etag! });
    expect(put.status).toBe(200);
    expect((await rest("GET", "/v1/policies/lockout", t.server.adminToken)).json.maxPasswordAttempts).toBe(7);
    expect((await rest("PUT", "/v1/policies/lockout", t.server.adminToken, { maxPasswordAttempts: 8 }, { "if-match": read.etag! })).status).toBe(412);
    expect((await rest("GET", "/v1/policies/lockout", loginClient.token)).status).toBe(403);
  });
});
