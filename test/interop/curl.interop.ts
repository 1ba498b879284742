import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { useTestServer } from "../support/server.js";
import { buildWorld, createActor, type World } from "../support/world.js";

const run = promisify(execFile);
const t = useTestServer();
let world: World;

beforeAll(async () => {
  world = await buildWorld(t.clients, t.server.adminToken, "curl");
  await t.clients.client(SmtpService, "connect-json-http1", { token: t.server.adminToken }).createSmtpConfig({ senderAddress: "a@example.com", senderName: "A", host: "mail.example.com:25" });
});

/** The real curl binary, HTTP/1.1, as a JSON-over-HTTP caller would use it. */
async function curl(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const args = ["-s", "--http1.1", "-X", method, `${t.server.url}${path}`, "-H", "Content-Type: application/json", "-H", `Authorization: Bearer ${t.server.adminToken}`, "-d", JSON.stringify(body), "-w", "\n%{http_code}"];
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}: ${value}`);
  const { stdout } = await run("curl", args);
  const newline = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(newline + 1)), json: JSON.parse(stdout.slice(0, newline)) as Record<string, unknown> };
}

const specReason = (json: Record<string, unknown>) => (json.details as { "@type": string; reason?: string }[]).find((d) => d["@type"].endsWith("google.rpc.ErrorInfo"))?.reason;
const connectReason = (json: Record<string, unknown>) => (json.details as { type: string; debug?: { reason?: string } }[]).find((d) => d.type === "google.rpc.ErrorInfo")?.debug?.reason;

interface Case {
  name: string;
  rest: (w: World) => { method: string; path: string; body: unknown; headers?: Record<string, string> };
  connect: (w: World) => { procedure: string; body: unknown; headers?: Record<string, string> };
  /** A request that must fail; `restPath` replaces the REST path (path parameters win over the body). */
  bad: { body: (w: World) => unknown; restPath?: string; status: number; code: number; connectCode: string; reason: string };
}

let n = 0;
const cases: Case[] = [
  {
    name: "4.1 Create/Import User",
    rest: () => ({ method: "POST", path: "/v1/users/human", body: { userName: `curl-r-${++n}`, profile: { firstName: "C", lastName: "U" }, email: { email: `curl-r-${n}@example.com` } } }),
    connect: () => ({ procedure: "UserService/CreateHumanUser", body: { userName: `curl-c-${++n}`, profile: { firstName: "C", lastName: "U" }, email: { email: `curl-c-${n}@example.com` } } }),
    bad: { body: () => ({ userName: "x", profile: { firstName: "", lastName: "U" }, email: { email: "x@example.com" } }), status: 400, code: 3, connectCode: "invalid_argument", reason: "request.invalid" },
  },
  {
    name: "4.2 Update SMTP Configuration",
    rest: () => ({ method: "PUT", path: "/v1/smtp", body: { senderAddress: "b@example.com", senderName: `B${++n}`, host: "mail.example.com:587" } }),
    connect: () => ({ procedure: "SmtpService/UpdateSmtpConfig", body: { senderAddress: "b@example.com", senderName: `B${++n}`, host: "mail.example.com:587" } }),
    bad: { body: () => ({ senderAddress: "b@example.com", senderName: "B", host: "mail.example.com" }), status: 400, code: 3, connectCode: "invalid_argument", reason: "smtp.host_invalid" },
  },
  {
    name: "4.3 Update IDP",
    rest: (w) => ({ method: "PUT", path: `/v1/idps/${w.idpId}`, body: { name: `curl idp ${++n}` }, headers: { "x-service-orgid": w.orgA } }),
    connect: (w) => ({ procedure: "IdentityProviderService/UpdateIdentityProvider", body: { idpId: w.idpId, name: `curl idp ${++n}` }, headers: { "x-service-orgid": w.orgA } }),
    bad: { body: () => ({ idpId: "no-such-idp", name: "x" }), restPath: "/v1/idps/no-such-idp", status: 404, code: 5, connectCode: "not_found", reason: "idp.not_found" },
  },
  {
    name: "4.4 Add Project Grant Member",
    rest: (w) => ({ method: "POST", path: `/v1/projects/${w.p1}/grants/${w.g1}/members`, body: { userId: "" }, headers: { "x-service-orgid": w.orgA } }),
    connect: (w) => ({ procedure: "ProjectService/AddProjectGrantMember", body: { projectId: w.p1, grantId: w.g1, userId: "" }, headers: { "x-service-orgid": w.orgA } }),
    bad: { body: () => ({ userId: "no-such-user" }), status: 400, code: 9, connectCode: "failed_precondition", reason: "user.not_found" },
  },
  {
    name: "4.5 Update Application",
    rest: (w) => ({ method: "PUT", path: `/v1/projects/${w.p1}/apps/${w.appId}`, body: { name: `curl app ${++n}` }, headers: { "x-service-orgid": w.orgA } }),
    connect: (w) => ({ procedure: "ApplicationService/UpdateApplication", body: { projectId: w.p1, appId: w.appId, name: `curl app ${++n}` }, headers: { "x-service-orgid": w.orgA } }),
    bad: { body: () => ({ name: "" }), status: 400, code: 3, connectCode: "invalid_argument", reason: "request.invalid" },
  },
  {
    name: "4.6 Verify the email",
    rest: () => ({ method: "POST", path: "/v1/users/PLACEHOLDER/email/verify", body: {} }),
    connect: () => ({ procedure: "UserService/VerifyEmail", body: {} }),
    bad: { body: () => ({ verificationCode: "ABC123" }), restPath: "/v1/users/no-such-user/email/verify", status: 404, code: 5, connectCode: "not_found", reason: "user.not_found" },
  },
];

/** Fills in what each case needs at run time (fresh members, a user with a pending code). */
async function prepare(name: string, request: { body: unknown; path?: string }): Promise<void> {
  const body = request.body as Record<string, unknown>;
  if (name.startsWith("4.4")) body.userId = (await createActor(t.clients, t.server.adminToken, world.orgB, `curl-member-${++n}`)).userId;
  if (name.startsWith("4.6")) {
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
    const { userId } = await users.createHumanUser({ userName: `curl-v-${++n}`, profile: { firstName: "V", lastName: "E" }, email: { email: `curl-v-${n}@example.com` } });
    const { verificationCode } = await users.resendEmailCode({ userId, returnCode: true });
    body.verificationCode = verificationCode;
    if (request.path) request.path = request.path.replace("PLACEHOLDER", userId);
    else body.userId = userId;
  }
}

describe.each(cases)("curl, $name", (c) => {
  it("REST: 200, then the SPEC error body with the mapped status", async () => {
    const request = c.rest(world);
    await prepare(c.name, request);
    const ok = await curl(request.method, request.path, request.body, request.headers);
    expect(ok.status).toBe(200);
    expect(ok.json).toHaveProperty("details");
    const bad = await curl(request.method, c.bad.restPath ?? request.path, c.bad.body(world), request.headers);
    expect(bad.status).toBe(c.bad.status);
    expect(bad.json.code).toBe(c.bad.code);
    expect(typeof bad.json.message).toBe("string");
    expect(specReason(bad.json)).toBe(c.bad.reason);
  });

  it("Connect JSON: 200, then the Connect error with the same reason", async () => {
    const request = c.connect(world);
    await prepare(c.name, request);
    const ok = await curl("POST", `/gatehouse.admin.v1.${request.procedure}`, request.body, request.headers);
    expect(ok.status).toBe(200);
    const badBody = { ...(request.body as object), ...(c.bad.body(world) as object), ...(c.name.startsWith("4.6") ? { userId: "no-such-user" } : {}) };
    const bad = await curl("POST", `/gatehouse.admin.v1.${request.procedure}`, badBody, request.headers);
    expect(bad.status).toBe(c.bad.status);
    expect(bad.json.code).toBe(c.bad.connectCode);
    expect(connectReason(bad.json)).toBe(c.bad.reason);
  });
});
