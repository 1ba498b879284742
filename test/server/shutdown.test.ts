import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { eventually } from "../support/eventually.js";
import { spawnGatehouse } from "../support/process.js";
import { startTestServer } from "../support/server.js";
import { makeSelfSignedCertificate } from "../support/tls.js";

const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-shutdown-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("SIGTERM", () => {
  it("lets an in-flight call complete, refuses new connections, and exits 0", async () => {
    const gatehouse = await spawnGatehouse({ GATEHOUSE_DATA_DIR: dataDir });
    const token = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
    const { port } = new URL(gatehouse.url);
    const body = JSON.stringify({ name: "Created during shutdown" });

    // A call whose body is still arriving when the signal comes: it is in flight. `Expect: 100-continue`
    // makes the server say when it has read the headers and dispatched the call.
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    let response = "";
    socket.on("data", (chunk) => (response += chunk.toString()));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write(
      `POST /gatehouse.admin.v1.OrganizationService/CreateOrganization HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n` +
        `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await eventually(() => response.startsWith("HTTP/1.1 100 Continue\r\n\r\n"), { what: "the server to accept the call's headers" });

    gatehouse.child.kill("SIGTERM");
    await eventually(() => gatehouse.lines.some((line) => line.includes('"stopping: draining in-flight calls"')), { what: "the server to start its stop" });
    // The listener closes: a new connection is refused (while the call above is still waiting for its body).
    await eventually(() => fetch(`${gatehouse.url}/metrics`).then(() => false, () => true), { what: "new connections to be refused" });
    expect(gatehouse.lines.some((line) => line.includes('"gatehouse stopped"'))).toBe(false);

    socket.write(body.slice(5));
    await closed;
    expect(response).toMatch(/^HTTP\/1.1 100 Continue\r\n\r\nHTTP\/1.1 200/);
    expect(response).toContain('"organizationId"');
    expect(await gatehouse.exit).toBe(0);
    expect(gatehouse.lines.some((line) => line.includes('"gatehouse stopped"'))).toBe(true);
  });
});

describe("graceful stop with idle keep-alive connections", () => {
  it.each([
    ["cleartext", false],
    ["TLS", true],
  ])("over %s HTTP/1.1 closes idle sockets at once instead of waiting out the shutdown timeout", async (_name, useTls) => {
    const certificate = useTls ? makeSelfSignedCertificate() : undefined;
    const server = await startTestServer({
      config: {
        shutdownTimeoutMs: 10_000,
        ...(certificate ? { tls: { certPath: certificate.certPath, keyPath: certificate.keyPath } } : {}),
      },
    });
    const transport = createConnectTransport({
      baseUrl: server.url,
      httpVersion: "1.1",
      nodeOptions: { agent: new (certificate ? https : http).Agent({ keepAlive: true, ...(certificate ? { ca: certificate.ca } : {}) }) },
      interceptors: [
        (next) => (req) => {
          req.header.set("authorization", `Bearer ${server.adminToken}`);
          return next(req);
        },
      ],
    });
    await createClient(InstanceService, transport).getInstance({});
    const started = Date.now();
    await server.dispose();
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
