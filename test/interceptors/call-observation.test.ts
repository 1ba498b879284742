import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { IdentityProviderService } from "../../gen/gatehouse/admin/v1/identity_provider_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb.js";
import { failure } from "../support/errors.js";
import { eventually } from "../support/eventually.js";
import { importedUser, streamImport } from "../support/import.js";
import { useTestServer } from "../support/server.js";

/**
 * What every call leaves behind besides its answer (src/interceptors): the request id it is known by, its metrics
 * sample and log line, the `Deprecation` mark of a deprecated rpc, and the `x-service-orgid` header's bounds.
 */
const t = useTestServer();
const GET_INSTANCE = "/gatehouse.admin.v1.InstanceService/GetInstance";

/** A Connect JSON call by hand, so headers can be anything. */
function call(path: string, headers: Record<string, string>, body = "{}") {
  return fetch(`${t.server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}`, ...headers },
    body,
  });
}
async function metric(line: RegExp): Promise<number> {
  const text = await (await fetch(`${t.server.url}/metrics`)).text();
  const found = text.split("\n").find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.split(" ").at(-1));
}
const rpcLines = () => t.server.logs.parsed().filter((line) => line.msg === "rpc");

describe("the request id", () => {
  it("keeps a caller's id of up to 64 plain characters, and replaces a longer or unusual one with its own", async () => {
    const longest = "a".repeat(64);
    expect((await call(GET_INSTANCE, { "x-request-id": longest })).headers.get("x-request-id")).toBe(longest);
    for (const refused of ["a".repeat(65), "has space", "semi;colon"]) {
      const echoed = (await call(GET_INSTANCE, { "x-request-id": refused })).headers.get("x-request-id");
      expect(echoed).toMatch(/^[0-9a-f-]{36}$/);
      expect(rpcLines().at(-1)?.requestId).toBe(echoed);
    }
  });

  it("is echoed on a failed call too, and is the one in that call's log line", async () => {
    const response = await call(GET_INSTANCE, { "x-request-id": "failing-call-7", authorization: "Bearer gh1.nope.nope" });
    expect(response.status).toBe(401);
    expect(response.headers.get("x-request-id")).toBe("failing-call-7");
    expect(rpcLines().at(-1)).toMatchObject({ requestId: "failing-call-7", code: "unauthenticated", reason: "auth.token_invalid", procedure: GET_INSTANCE });
  });

  it("names a failed call's reason, and a call that succeeded has none", async () => {
    await call(GET_INSTANCE, { "x-request-id": "ok-call-8", authorization: `Bearer ${t.server.adminToken}` });
    const line = rpcLines().find((entry) => entry.requestId === "ok-call-8");
    expect(line).toMatchObject({ code: "ok" });
    expect(line).not.toHaveProperty("reason");
  });
});

describe("metrics and the log line per call", () => {
  it("counts each call under its procedure and code, and observes its duration", async () => {
    const okCalls = /^gatehouse_rpc_calls_total\{procedure="\/gatehouse\.admin\.v1\.InstanceService\/GetInstance",code="ok"\}/;
    const deniedCalls = /^gatehouse_rpc_calls_total\{procedure="\/gatehouse\.admin\.v1\.InstanceService\/GetInstance",code="unauthenticated"\}/;
    const durations = /^gatehouse_rpc_duration_seconds_count\{procedure="\/gatehouse\.admin\.v1\.InstanceService\/GetInstance",code="ok"\}/;
    const [ok, denied, timed] = [await metric(okCalls), await metric(deniedCalls), await metric(durations)];
    await call(GET_INSTANCE, {});
    await call(GET_INSTANCE, {});
    await call(GET_INSTANCE, { authorization: "Bearer gh1.nope.nope" });
    expect(await metric(okCalls)).toBe(ok + 2);
    expect(await metric(deniedCalls)).toBe(denied + 1);
    expect(await metric(durations)).toBe(timed + 2);
  });

  it("logs the duration in milliseconds: an argon2id hash (tens of ms) shows as such, not as seconds or nanoseconds", async () => {
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
    await users.createHumanUser({
      userName: "observed-hash",
      profile: { firstName: "Ob", lastName: "Served" },
      email: { email: "observed@example.com" },
      password: "Observed-Password-1!",
    });
    const line = rpcLines().findLast((l) => l.procedure === "/gatehouse.admin.v1.UserService/CreateHumanUser");
    expect(line?.durationMs).toBeGreaterThanOrEqual(5);
    expect(line?.durationMs).toBeLessThan(10_000);
  });
});

describe("the log line and the sample of a streaming call", () => {
  const IMPORT = "/gatehouse.admin.v1.UserService/ImportHumanUsers";
  const linesOf = (procedure: string, from: number) => rpcLines().slice(from).filter((line) => line.procedure === procedure);

  it("are written once, when the stream ends, with the code it ended with: ok after its last answer, or its failure", async () => {
    const users = t.clients.client(UserService, "grpc-h2c", { token: t.server.adminToken });
    let from = rpcLines().length;
    const answers = await streamImport(users, [{ users: [importedUser("streamed-ok-1")] }, { users: [importedUser("streamed-ok-2")] }]);
    expect(answers).toHaveLength(2);
    expect(linesOf(IMPORT, from)).toEqual([expect.objectContaining({ code: "ok", protocol: "grpc" })]);

    // A first message answered, then one of more users than a message may carry: the stream fails on it.
    from = rpcLines().length;
    const tooMany = Array.from({ length: 1001 }, (_, i) => importedUser(`streamed-too-many-${i}`));
    expect(await failure(streamImport(users, [{ users: [importedUser("streamed-first")] }, { users: tooMany }]))).toMatchObject({ code: Code.InvalidArgument });
    expect(linesOf(IMPORT, from)).toEqual([expect.objectContaining({ code: "invalid_argument", reason: "request.invalid" })]);
  });

  it("of a Health.Watch whose client went away say canceled, not ok", async () => {
    const health = t.clients.client(Health, "grpc-h2c");
    const from = rpcLines().length;
    const gone = new AbortController();
    const stream = health.watch({ service: "" }, { signal: gone.signal })[Symbol.asyncIterator]();
    expect((await stream.next()).value?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    gone.abort();
    const line = await eventually(() => linesOf("/grpc.health.v1.Health/Watch", from)[0], { what: "the Watch call's line", timeoutMs: 10_000 });
    expect(line).toMatchObject({ code: "canceled" });
    expect(linesOf("/grpc.health.v1.Health/Watch", from)).toHaveLength(1);
  });
});

describe("a deprecated rpc", () => {
  it("is counted in gatehouse_deprecated_calls_total, success or not; other calls are not", async () => {
    const deprecated = /^gatehouse_deprecated_calls_total\{procedure="\/gatehouse\.admin\.v1\.IdentityProviderService\/UpdateIdentityProvider"\}/;
    const before = await metric(deprecated);
    const idps = t.clients.client(IdentityProviderService, "connect-json-http1", { token: t.server.adminToken });
    await failure(idps.updateIdentityProvider({ idpId: "no-such-idp", name: "x" }));
    await call(GET_INSTANCE, {});
    expect(await metric(deprecated)).toBe(before + 1);
    expect(await metric(/^gatehouse_deprecated_calls_total\{procedure="\/gatehouse\.admin\.v1\.InstanceService/)).toBe(0);
  });
});

describe("x-service-orgid", () => {
  it("must be 1 to 200 characters: empty and 201 are invalid_argument naming the header, 200 is read as an id", async () => {
    for (const value of ["", "o".repeat(201)]) {
      const response = await call(GET_INSTANCE, { "x-service-orgid": value });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { code: string; message: string; details: { debug?: { reason?: string; fieldViolations?: { field: string; reason: string }[] } }[] };
      expect(body.code).toBe("invalid_argument");
      expect(body.message).toContain("x-service-orgid");
      expect(JSON.stringify(body.details)).toContain("request.invalid");
      expect(JSON.stringify(body.details)).toContain("header.length");
    }
    const users = t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: "o".repeat(200) });
    expect(await failure(users.getUser({ userId: "x" }))).toMatchObject({ reason: "organization.access_denied" });
  });
});
