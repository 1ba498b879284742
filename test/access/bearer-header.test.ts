import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";

/**
 * The Authorization header is exactly `Bearer <token>` (API.md "Identity"): the scheme first, one token, nothing
 * after it. Anything else is auth.malformed — also when a valid token is somewhere inside.
 */
const t = useTestServer();

async function withAuthorization(value: string) {
  return failure(t.clients.client(InstanceService, "connect-json-http1", { authorization: value }).getInstance({}));
}

describe("the Authorization header", () => {
  it("accepts the scheme in any case", async () => {
    const client = t.clients.client(InstanceService, "connect-json-http1", { authorization: `bEaReR ${t.server.adminToken}` });
    expect((await client.getInstance({})).instanceId).toMatch(/\S/);
  });

  it.each([
    ["a valid token with text after it", (token: string) => `Bearer ${token} extra`],
    ["another scheme before it", (token: string) => `Basic Bearer ${token}`],
    ["no scheme", (token: string) => token],
  ])("with %s is auth.malformed, naming the expected form", async (_name, header) => {
    const error = await withAuthorization(header(t.server.adminToken));
    expect(error).toMatchObject({ code: Code.Unauthenticated, reason: "auth.malformed" });
    expect(error.message).toContain("Bearer <token>");
  });
});
