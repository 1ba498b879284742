import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport, Http2SessionManager } from "@connectrpc/connect-node";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstanceService } from "../../gen/gatehouse/admin/v1/instance_pb.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { makeSelfSignedCertificate } from "../support/tls.js";

describe("TLS with ALPN on one port", () => {
  let server: TestServer;
  let ca: Buffer;
  let manager: Http2SessionManager;

  beforeAll(async () => {
    const tls = makeSelfSignedCertificate();
    ca = tls.ca;
    server = await startTestServer({ config: { tls: { certPath: tls.certPath, keyPath: tls.keyPath } } });
    manager = new Http2SessionManager(server.url, {}, { ca });
  });

  afterAll(async () => {
    manager.abort();
    await server.dispose();
  });

  const auth = () => [
    (next: (r: never) => never) => (req: { header: Headers }) => {
      req.header.set("authorization", `Bearer ${server.adminToken}`);
      return next(req as never);
    },
  ];

  it("serves gRPC over h2 (ALPN h2)", async () => {
    expect(server.url).toMatch(/^https:/);
    const client = createClient(InstanceService, createGrpcTransport({ baseUrl: server.url, sessionManager: manager, interceptors: auth() as never }));
    expect((await client.getInstance({})).instanceId).not.toBe("");
  });

  it("serves Connect and gRPC-web over HTTP/1.1 (ALPN http/1.1)", async () => {
    for (const transport of [
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { ca }, interceptors: auth() as never }),
      createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1", nodeOptions: { ca }, interceptors: auth() as never }),
    ]) {
      expect((await createClient(InstanceService, transport).getInstance({})).instanceId).not.toBe("");
    }
  });
});

describe("slow and silent clients", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
  });
  afterAll(async () => {
    await server.dispose();
  });

  const port = () => Number(new URL(server.url).port);

  /** Opens a raw socket, writes `data`, and resolves with what the server sent before closing. */
  function rawExchange(data: string): Promise<{ received: string; ms: number }> {
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const socket = net.connect(port(), "127.0.0.1", () => {
        if (data) socket.write(data);
      });
      let received = "";
      socket.on("data", (chunk) => (received += chunk.toString()));
      socket.on("close", () => resolve({ received, ms: Date.now() - started }));
      socket.on("error", reject);
      setTimeout(() => reject(new Error("server kept the connection open")), 10_000).unref();
    });
  }

  it("drops a connection that sends nothing", async () => {
    const { received, ms } = await rawExchange("");
    expect(received).toBe("");
    expect(ms).toBeLessThan(5_000);
  });

  it("answers 408 to a client that never finishes its headers", async () => {
    const { received } = await rawExchange("POST /gatehouse.admin.v1.InstanceService/GetInstance HTTP/1.1\r\nHost: x\r\n");
    expect(received).toMatch(/^HTTP\/1.1 408/);
  });

  it("answers 408 to a client that never finishes its body", async () => {
    const { received } = await rawExchange(
      `POST /gatehouse.admin.v1.InstanceService/GetInstance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{`,
    );
    expect(received).toMatch(/^HTTP\/1.1 408/);
  });
});
