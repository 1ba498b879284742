import { validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { useTestServer } from "../support/server.js";

const t = useTestServer();

interface Operation {
  deprecated?: boolean;
  parameters: { name: string; in: string }[];
  requestBody?: { content: { "application/json": { schema: { required?: string[]; properties: Record<string, { maxLength?: number; minLength?: number }> } } } };
  responses: Record<string, { headers?: Record<string, unknown> }>;
}

describe("GET /openapi.json", () => {
  it("serves a valid OpenAPI 3.1 document of the REST routes, with limits, the org header and deprecation", async () => {
    const response = await fetch(`${t.server.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.specification).toBe("OpenAPI");
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths).sort()).toEqual([
      "/v1/idps/{idp_id}",
      "/v1/policies/lockout",
      "/v1/projects/{project_id}/apps/{app_id}",
      "/v1/projects/{project_id}/grants/{grant_id}/members",
      "/v1/smtp",
      "/v1/users/human",
      "/v1/users/password/verify",
      "/v1/users/{user_id}/email/verify",
      "/v1/users/{user_id}/password",
    ]);
    const idp = document.paths["/v1/idps/{idp_id}"]!.put!;
    expect(idp.deprecated).toBe(true);
    expect(idp.parameters.map((p) => `${p.in}:${p.name}`)).toEqual(["path:idp_id", "header:x-service-orgid", "header:If-Match"]);
    expect(document.paths["/v1/smtp"]!.put!.parameters.some((p) => p.name === "x-service-orgid")).toBe(false);
    const createUser = document.paths["/v1/users/human"]!.post!.requestBody!.content["application/json"].schema;
    expect(createUser.required).toEqual(expect.arrayContaining(["userName", "profile", "email"]));
    const profile = document.components.schemas["gatehouse.admin.v1.Profile"] as { properties: Record<string, { maxLength?: number; minLength?: number; enum?: string[] }> };
    expect(profile.properties.firstName).toMatchObject({ minLength: 1, maxLength: 200 });
    expect(profile.properties.preferredLanguage).toMatchObject({ maxLength: 10 });
    expect(profile.properties.gender?.enum).toEqual(["GENDER_UNSPECIFIED", "GENDER_FEMALE", "GENDER_MALE", "GENDER_DIVERSE"]);
    expect(document.components.schemas.ErrorBody).toBeDefined();
  });

  it("documents optimistic concurrency: If-Match and 412 where the call takes expected_sequence, ETag where an answer carries one object's details", async () => {
    const document = (await (await fetch(`${t.server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const operations = Object.values(document.paths).flatMap((path) => Object.entries(path).map(([method, operation]) => ({ method, operation })));
    const conditional = operations.filter(({ operation }) => operation.parameters.some((p) => p.in === "header" && p.name === "If-Match"));
    // The four PUT routes, and SetPassword's POST (it takes expected_sequence like the other Set… RPCs).
    expect(conditional.map(({ method }) => method).sort()).toEqual(["post", "put", "put", "put", "put"]);
    for (const { operation } of conditional) expect(Object.keys(operation.responses)).toContain("412");
    // Every route of the document answers one object's details (no list is a REST route): each sends ETag.
    for (const { operation } of operations) expect(Object.keys(operation.responses["200"]!.headers ?? {})).toContain("ETag");
    const reads = operations.filter(({ method }) => method === "get");
    expect(reads).toHaveLength(4);
    for (const { operation } of reads) expect(Object.keys(operation.responses)).not.toContain("412");
    // The deprecated route keeps its Deprecation header beside the ETag.
    expect(Object.keys(document.paths["/v1/idps/{idp_id}"]!.put!.responses["200"]!.headers!).sort()).toEqual(["Deprecation", "ETag"]);
  });
});
