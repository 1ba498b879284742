import { Code } from "@connectrpc/connect";
import { errorToJson } from "@connectrpc/connect/protocol-connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ApplicationService, OidcAuthMethod } from "../../gen/gatehouse/admin/v1/application_pb.js";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { ProjectService } from "../../gen/gatehouse/admin/v1/project_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { DomainError } from "../../src/domain/errors.js";
import { fromDomainError } from "../../src/interceptors/error-mapping.js";
import { fromConnectError } from "../../src/rest/error-body.js";
import { useTestServer } from "../support/server.js";

/**
 * API.md "Optimistic concurrency" on REST: every route that answers with one object's details sends
 * `ETag: "<details.sequence>"`; the routes of RPCs that take expected_sequence honour `If-Match: "<sequence>"` (`*`:
 * any) and answer 412 with the SPEC error body (aborted, concurrent_modification, current_sequence) when the object
 * changed since; a malformed If-Match is 400 naming it.
 */
const t = useTestServer();
let orgId: string;
let serial = 0;
const unique = (prefix: string) => `${prefix}-${++serial}-${Date.now().toString(36)}`;

const SMTP = { senderAddress: "noreply@example.com", tls: true, host: "smtp.example.com:587", user: "mailer" };

beforeAll(async () => {
  ({ organizationId: orgId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: unique("REST OCC") }));
  await t.clients.client(SmtpService, "connect-json-http1", { token: t.server.adminToken }).createSmtpConfig({ ...SMTP, senderName: "REST OCC", password: "pw" });
});

interface SpecBody {
  code: number;
  message: string;
  details: { "@type": string; reason?: string; metadata?: Record<string, string>; fieldViolations?: { field: string; description: string; reason?: string }[] }[];
}

async function rest(method: string, path: string, options: { body?: unknown; ifMatch?: string } = {}) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${t.server.adminToken}`,
      "x-service-orgid": orgId,
      ...(options.ifMatch !== undefined ? { "if-match": options.ifMatch } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const body: unknown = await response.json();
  // A success is the RPC's JSON answer; an error the SPEC body.
  return { status: response.status, etag: response.headers.get("etag"), json: body as Record<string, any>, spec: body as SpecBody };
}

const errorInfo = (body: SpecBody) => body.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo");
/** The field violations of the body's google.rpc.BadRequest (API.md: the SPEC body's details carry their type URL). */
const violations = (body: SpecBody) => body.details.filter((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest").flatMap((d) => d.fieldViolations ?? []);

/** One object with a GET and a PUT route. */
interface Resource {
  name: string;
  make(): Promise<{ path: string; objectKey: string; update: (n: string) => Record<string, unknown>; nameOf: (object: Record<string, any>) => string }>;
}

const resources: Resource[] = [
  {
    name: "application (GET/PUT /v1/projects/{project_id}/apps/{app_id})",
    async make() {
      const { projectId } = await t.clients.client(ProjectService, "connect-json-http1", { token: t.server.adminToken, orgId }).createProject({ name: unique("rest-occ") });
      const { appId } = await t.clients
        .client(ApplicationService, "connect-json-http1", { token: t.server.adminToken, orgId })
        .createOidcApplication({ projectId, name: unique("app"), redirectUris: ["https://app.example.com/cb"], authMethod: OidcAuthMethod.BASIC });
      return { path: `/v1/projects/${projectId}/apps/${appId}`, objectKey: "app", update: (name) => ({ name }), nameOf: (app) => app.name };
    },
  },
  {
    name: "identity provider (GET/PUT /v1/idps/{idp_id})",
    async make() {
      const { idpId } = await t.clients
        .client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken, orgId })
        .createIdentityProvider({ name: unique("idp"), issuer: "https://sso.example.com", clientId: "gatehouse", clientSecret: "s3cret" });
      return { path: `/v1/idps/${idpId}`, objectKey: "idp", update: (name) => ({ name }), nameOf: (idp) => idp.name };
    },
  },
  {
    name: "SMTP configuration (GET/PUT /v1/smtp)",
    async make() {
      return { path: "/v1/smtp", objectKey: "config", update: (senderName) => ({ ...SMTP, senderName }), nameOf: (config) => config.senderName };
    },
  },
];

describe.each(resources)("$name", (resource) => {
  it("GET and PUT answer ETag: the strong, quoted details.sequence of the object", async () => {
    const { path, objectKey, update } = await resource.make();
    const read = await rest("GET", path);
    expect(read.status).toBe(200);
    expect(read.etag).toBe(`"${read.json[objectKey].details.sequence}"`);
    const written = await rest("PUT", path, { body: update(unique("n")) });
    expect(written.status).toBe(200);
    expect(written.etag).toBe(`"${written.json.details.sequence}"`);
    expect(written.etag).not.toBe(read.etag);
    expect((await rest("GET", path)).etag).toBe(written.etag);
  });

  it("If-Match with the ETag just read: the update is made", async () => {
    const { path, update, objectKey, nameOf } = await resource.make();
    const read = await rest("GET", path);
    const name = unique("matched");
    const written = await rest("PUT", path, { body: update(name), ifMatch: read.etag! });
    expect(written.status).toBe(200);
    expect(nameOf((await rest("GET", path)).json[objectKey])).toBe(name);
  });

  it("If-Match with a stale ETag: 412 with the SPEC body (aborted, concurrent_modification, current_sequence), nothing written", async () => {
    const { path, update, objectKey, nameOf } = await resource.make();
    const stale = (await rest("GET", path)).etag!;
    const meanwhileName = unique("meanwhile");
    const meanwhile = await rest("PUT", path, { body: update(meanwhileName) });
    const refused = await rest("PUT", path, { body: update(unique("refused")), ifMatch: stale });
    expect(refused.status).toBe(412);
    expect(refused.spec.code).toBe(Code.Aborted);
    expect(refused.spec.message).not.toBe("");
    expect(errorInfo(refused.spec)).toMatchObject({ reason: "concurrent_modification", domain: "gatehouse", metadata: { current_sequence: meanwhile.json.details.sequence } });
    const after = await rest("GET", path);
    expect(after.etag).toBe(meanwhile.etag);
    expect(nameOf(after.json[objectKey])).toBe(meanwhileName);
  });

  it("If-Match: * and no If-Match: the last writer wins", async () => {
    const { path, update } = await resource.make();
    await rest("PUT", path, { body: update(unique("first")) });
    expect((await rest("PUT", path, { body: update(unique("any")), ifMatch: "*" })).status).toBe(200);
    expect((await rest("PUT", path, { body: update(unique("none")) })).status).toBe(200);
  });
});

describe("a malformed If-Match", () => {
  it.each([['W/"5"'], ["5"], ['"5", "6"'], ['"abc"'], ['"05"'], ['"-1"'], ['"123456789012345678901"'], ['"18446744073709551616"'], ['""']])(
    "%s is 400 invalid_argument naming If-Match, and nothing is written",
    async (ifMatch) => {
      const read = await rest("GET", "/v1/smtp");
      const refused = await rest("PUT", "/v1/smtp", { body: { ...SMTP, senderName: unique("malformed") }, ifMatch });
      expect(refused.status).toBe(400);
      expect(refused.spec.code).toBe(Code.InvalidArgument);
      expect(refused.spec.message).toContain("If-Match");
      expect(errorInfo(refused.spec)?.reason).toBe("request.invalid");
      expect(violations(refused.spec).map((v) => v.field)).toEqual(["If-Match"]);
      expect(violations(refused.spec)[0]!.description).not.toBe("");
      expect(violations(refused.spec)[0]!.reason).toBe("header.if_match");
      expect((await rest("GET", "/v1/smtp")).etag).toBe(read.etag);
    },
  );

  it.each([['"18446744073709551615"'], ['"0"']])("%s (the largest and the smallest uint64) is well-formed: a sequence the object is not at (412)", async (ifMatch) => {
    const refused = await rest("PUT", "/v1/smtp", { body: { ...SMTP, senderName: unique("edge") }, ifMatch });
    expect(refused.status).toBe(412);
  });

  it("surrounding white space is no part of the tag", async () => {
    const read = await rest("GET", "/v1/smtp");
    expect((await rest("PUT", "/v1/smtp", { body: { ...SMTP, senderName: unique("spaced") }, ifMatch: ` ${read.etag!} ` })).status).toBe(200);
  });

  it("that names another sequence than the body's expectedSequence is 400; the same one is taken", async () => {
    const read = await rest("GET", "/v1/smtp");
    const sequence = read.json.config.details.sequence as string;
    const other = String(BigInt(sequence) + 1n);
    const refused = await rest("PUT", "/v1/smtp", { body: { ...SMTP, senderName: unique("both"), expectedSequence: other }, ifMatch: read.etag! });
    expect(refused.status).toBe(400);
    expect(violations(refused.spec).map((v) => v.field)).toEqual(["If-Match"]);
    expect((await rest("GET", "/v1/smtp")).etag).toBe(read.etag);
    const same = await rest("PUT", "/v1/smtp", { body: { ...SMTP, senderName: unique("both"), expected_sequence: sequence }, ifMatch: read.etag! });
    expect(same.status).toBe(200);
  });
});

describe("routes whose call takes no expected_sequence", () => {
  it("refuse If-Match (400 naming it) rather than ignore a condition they cannot judge, and write nothing", async () => {
    const userName = unique("rest-occ-user");
    const refused = await rest("POST", "/v1/users/human", {
      body: { userName, profile: { firstName: "Re", lastName: "St" }, email: { email: `${userName}@example.com`, isEmailVerified: true } },
      ifMatch: "*",
    });
    expect(refused.status).toBe(400);
    expect(violations(refused.spec).map((v) => v.field)).toEqual(["If-Match"]);
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId });
    expect((await users.listUsers({ userName })).users).toEqual([]);
  });

  it("still answer ETag when they answer one object's details (a creation)", async () => {
    const userName = unique("rest-occ-user");
    const created = await rest("POST", "/v1/users/human", { body: { userName, profile: { firstName: "Re", lastName: "St" }, email: { email: `${userName}@example.com`, isEmailVerified: true } } });
    expect(created.status).toBe(200);
    expect(created.etag).toBe(`"${created.json.details.sequence}"`);
  });

  it("errors carry no ETag", async () => {
    const missing = await rest("GET", "/v1/idps/no-such-idp");
    expect(missing.status).toBe(404);
    expect(missing.etag).toBeNull();
  });
});

describe("the REST status of an aborted call", () => {
  const statusOf = (reason: string) => fromConnectError(errorToJson(fromDomainError(new DomainError("aborted", reason, "changed meanwhile", { current_sequence: "7" })), undefined));

  it("is 412 for a stale expected_sequence (If-Match), with its metadata in the body", () => {
    const error = statusOf("concurrent_modification");
    expect(error.status).toBe(412);
    expect(error.body.code).toBe(Code.Aborted);
    expect(error.body.details[0]).toMatchObject({ reason: "concurrent_modification", metadata: { current_sequence: "7" } });
  });

  it("stays 409 for every other aborted reason", () => {
    expect(statusOf("store.condition_failed").status).toBe(409);
  });
});
