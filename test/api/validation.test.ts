import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Gender, UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { PROTOCOLS } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

// A small request limit, so the oversized-body case needs no large upload.
const t = useTestServer({ config: { maxRequestBytes: 64 * 1024 } });

const validHuman = {
  userName: "valid",
  profile: { firstName: "Ada", lastName: "Lovelace" },
  email: { email: "ada@example.com" },
};

describe.each(PROTOCOLS)("request validation over %s", (protocol) => {
  const users = () => t.clients.client(UserService, protocol, { token: t.server.adminToken });

  it("reports one field violation per broken rule, with the path the caller wrote", async () => {
    const error = await failure(
      users().createHumanUser({
        userName: "",
        profile: { firstName: "", lastName: "x".repeat(201), preferredLanguage: "x".repeat(11) },
        email: { email: "a@example.com" },
        phone: { phone: "" },
        idps: [{ configId: "idp", externalUserId: "ext" }, { configId: "", externalUserId: "e".repeat(201) }],
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(error.reason).toBe("request.invalid");
    expect(error.fields.sort()).toEqual(
      [
        "user_name",
        "profile.first_name",
        "profile.last_name",
        "profile.preferred_language",
        "phone.phone",
        "idps[1].config_id",
        "idps[1].external_user_id",
      ].sort(),
    );
    expect(error.rules).toContain("string.max_len");
    expect(error.rules).toContain("string.min_len");
  });

  it("names required messages that are missing", async () => {
    const error = await failure(users().createHumanUser({ userName: "x" }));
    expect(error.fields.sort()).toEqual(["email", "profile"]);
    expect(error.rules).toEqual(["required", "required"]);
  });

  it("rejects unknown enum numbers", async () => {
    const error = await failure(users().createHumanUser({ ...validHuman, profile: { ...validHuman.profile, gender: 99 as Gender } }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, reason: "request.invalid", fields: ["profile.gender"], rules: ["enum.defined_only"] });
  });

  it("accepts values at the limit: 200 characters and a 10-character language", async () => {
    const { userId } = await users().createHumanUser({
      ...validHuman,
      userName: `limits-${protocol}`,
      profile: { firstName: "f".repeat(200), lastName: "l".repeat(200), preferredLanguage: "x".repeat(10), gender: Gender.DIVERSE },
    });
    expect(userId).not.toBe("");
  });

  it("counts characters, not bytes", async () => {
    const orgs = t.clients.client(OrganizationService, protocol, { token: t.server.adminToken });
    // 200 two-byte characters: 400 bytes, within the 200-character limit.
    const name = `${protocol}-`.padEnd(200, "é");
    const { organizationId } = await orgs.createOrganization({ name });
    expect(organizationId).not.toBe("");
    const error = await failure(orgs.createOrganization({ name: `${name}é` }));
    expect(error).toMatchObject({ code: Code.InvalidArgument, fields: ["name"], rules: ["string.max_len"] });
  });
});

describe("malformed requests get a clear error, and the server keeps serving", () => {
  const post = (path: string, contentType: string, body: string | Uint8Array<ArrayBuffer>) =>
    fetch(`${t.server.url}${path}`, {
      method: "POST",
      headers: { "content-type": contentType, authorization: `Bearer ${t.server.adminToken}` },
      body,
    });
  const stillServing = async () => {
    const response = await post("/gatehouse.admin.v1.InstanceService/GetInstance", "application/json", "{}");
    expect(response.status).toBe(200);
  };

  it("malformed JSON → invalid_argument", async () => {
    const response = await post("/gatehouse.admin.v1.OrganizationService/CreateOrganization", "application/json", '{"name": ');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe("invalid_argument");
    await stillServing();
  });

  it("a JSON field of the wrong type → invalid_argument", async () => {
    const response = await post("/gatehouse.admin.v1.OrganizationService/CreateOrganization", "application/json", '{"name": 42}');
    expect(response.status).toBe(400);
    await stillServing();
  });

  it("malformed protobuf bytes → invalid_argument with ErrorInfo: the client's fault, as the Connect reference answers", async () => {
    const response = await post("/gatehouse.admin.v1.OrganizationService/CreateOrganization", "application/proto", new Uint8Array([0x0a, 0xff, 0xff, 0xff]));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { code: string; details?: { type: string }[] };
    expect(body.code).toBe("invalid_argument");
    expect(body.details?.map((detail) => detail.type)).toContain("google.rpc.ErrorInfo");
    await stillServing();
  });

  it("an oversized body → resource_exhausted naming the limit", async () => {
    const response = await post("/gatehouse.admin.v1.OrganizationService/CreateOrganization", "application/json", JSON.stringify({ name: "x".repeat(100_000) }));
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe("resource_exhausted");
    expect(body.message).toMatch(/65536/);
    await stillServing();
  });

  it("an oversized message over gRPC → resource_exhausted", async () => {
    const orgs = t.clients.client(OrganizationService, "grpc-h2c", { token: t.server.adminToken });
    const error = await failure(orgs.createOrganization({ name: "x".repeat(100_000) }));
    expect(error.code).toBe(Code.ResourceExhausted);
    await stillServing();
  });
});
