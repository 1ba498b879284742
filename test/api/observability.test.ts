import { describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import type { Protocol } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { useTestServer } from "../support/server.js";

const t = useTestServer();

const rpcLines = () => t.server.logs.parsed().filter((line) => line.msg === "rpc");

describe("one structured log line per call", () => {
  it.each([
    ["connect-json-http1", "connect"],
    ["grpc-h2c", "grpc"],
    ["grpc-web-http1", "grpc-web"],
  ] as [Protocol, string][])("over %s: request id, procedure, protocol, code, duration, caller", async (protocol, name) => {
    const before = rpcLines().length;
    await t.clients.client(InstanceService, protocol, { token: t.server.adminToken }).getInstance({});
    await failure(t.clients.client(InstanceService, protocol, { token: "gh1.nope.nope" }).getInstance({}));
    const [ok, denied] = rpcLines().slice(before);
    expect(ok).toMatchObject({ procedure: "/gatehouse.admin.v1.InstanceService/GetInstance", protocol: name, code: "ok", caller: expect.any(String) as unknown });
    expect(ok?.requestId).toEqual(expect.any(String));
    expect(ok?.durationMs).toEqual(expect.any(Number));
    expect(denied).toMatchObject({ protocol: name, code: "unauthenticated" });
    expect(denied?.caller).toBeUndefined();
  });

  it("keeps a caller's x-request-id and echoes it", async () => {
    const response = await fetch(`${t.server.url}/gatehouse.admin.v1.InstanceService/GetInstance`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${t.server.adminToken}`, "x-request-id": "trace-42" },
      body: "{}",
    });
    expect(response.headers.get("x-request-id")).toBe("trace-42");
    expect(rpcLines().at(-1)?.requestId).toBe("trace-42");
  });

  it("never logs a token: neither an accepted nor a rejected one", async () => {
    // Its own calls, so the check reads lines this test made (not lines earlier tests happened to write).
    const before = t.server.logs.lines.length;
    const rejected = "gh1.not-a-real-id.rejected-token-secret-part";
    await t.clients.client(InstanceService, "grpc-h2c", { token: t.server.adminToken }).getInstance({});
    await failure(t.clients.client(InstanceService, "connect-json-http1", { token: rejected }).getInstance({}));
    const written = t.server.logs.lines.slice(before).join("\n");
    expect(rpcLines().slice(-2).map((line) => line.code)).toEqual(["ok", "unauthenticated"]);
    expect(written).not.toContain(t.server.adminToken.split(".")[2]);
    expect(written).not.toContain("rejected-token-secret-part");
    expect(written.toLowerCase()).not.toContain("bearer");
  });
});
