import { rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { startTestServer } from "../support/server.js";
import { makeSelfSignedCertificate } from "../support/tls.js";

// A stopping server (Gatehouse.close) should get no more traffic: /readyz answers 503 "not ready" from the moment
// the stop begins, and an HTTP/1.1 connection still busy with a call is told `Connection: close` on what it is
// answered, so the client opens no further request on it.
describe("a server that is stopping", () => {
  it.each([
    ["cleartext", false],
    ["TLS (HTTP/1.1 by ALPN)", true],
  ])("over %s: is ready while it runs; once stopping, answers /readyz 503 not ready with Connection: close on a connection whose call is still in flight", async (_name, useTls) => {
    const certificate = useTls ? makeSelfSignedCertificate() : undefined;
    const server = await startTestServer(certificate ? { config: { tls: { certPath: certificate.certPath, keyPath: certificate.keyPath } } } : {});
    try {
      const { port } = new URL(server.url);
      const body = JSON.stringify({ name: "Created while stopping" });
      const socket = certificate
        ? tls.connect({ port: Number(port), host: "127.0.0.1", ca: certificate.ca, servername: "localhost", ALPNProtocols: ["http/1.1"] })
        : net.connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once(certificate ? "secureConnect" : "connect", resolve));
      // Ready while it runs (on this connection, which stays open).
      let response = "";
      socket.on("data", (chunk: Buffer) => (response += chunk.toString("utf8")));
      socket.write("GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n");
      await eventually(() => response.endsWith("ok\n") || response.endsWith("ok\n\r\n0\r\n\r\n"), { what: "the first probe's answer" });
      expect(response).toMatch(/^HTTP\/1\.1 200 /);
      response = "";
      const closed = new Promise((resolve) => socket.once("close", resolve));
      // A call whose body is still arriving: in flight when the stop begins (100 Continue: its headers were read).
      socket.write(
        "POST /gatehouse.admin.v1.OrganizationService/CreateOrganization HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n" +
          `Authorization: Bearer ${server.adminToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      await eventually(() => response.startsWith("HTTP/1.1 100 Continue\r\n\r\n"), { what: "the server to accept the call's headers" });
      const stopping = server.gatehouse.close();
      // The rest of the call, and a readiness probe after it on the same connection.
      socket.write(`${body.slice(5)}GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n`);
      await closed;
      await stopping;
      const answers = response.replace("HTTP/1.1 100 Continue\r\n\r\n", "").split(/(?=HTTP\/1\.1 \d{3} )/);
      expect(answers).toHaveLength(2);
      expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /);
      expect(answers[0]).toContain('"organizationId"');
      expect(answers[1]).toMatch(/^HTTP\/1\.1 503 /);
      expect(answers[1]).toMatch(/\r\nConnection: close\r\n/i);
      expect(answers[1]).toContain("not ready\n");
    } finally {
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  });

  it("over TLS with HTTP/2: a stream in flight when the stop begins is still answered", async () => {
    const certificate = makeSelfSignedCertificate();
    const server = await startTestServer({ config: { tls: { certPath: certificate.certPath, keyPath: certificate.keyPath } } });
    const session = http2.connect(server.url, { ca: certificate.ca, servername: "localhost" });
    let sessionError: unknown;
    session.on("error", (error) => (sessionError = error));
    try {
      await new Promise((resolve, reject) => {
        session.once("connect", resolve);
        session.once("close", () => reject(new Error(`the session closed: ${String(sessionError)}`)));
      });
      const body = JSON.stringify({ name: "Created over h2 while stopping" });
      const stream = session.request({
        ":method": "POST",
        ":path": "/gatehouse.admin.v1.OrganizationService/CreateOrganization",
        "content-type": "application/json",
        authorization: `Bearer ${server.adminToken}`,
      });
      let status = 0;
      let text = "";
      stream.on("response", (headers) => (status = Number(headers[":status"])));
      stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      const ended = new Promise<void>((resolve, reject) => {
        stream.on("end", () => resolve());
        stream.on("error", reject);
        stream.on("close", () => resolve());
      });
      stream.write(body.slice(0, 5));
      // A ping's answer comes after the server read the frames before it: the call is in flight, waiting for its body.
      await new Promise((resolve, reject) => session.ping((error) => (error ? reject(new Error(`${error.message}: ${String(sessionError)}`)) : resolve(undefined))));
      const stopping = server.gatehouse.close();
      stream.end(body.slice(5));
      await ended;
      await stopping;
      expect(status).toBe(200);
      expect(text).toContain('"organizationId"');
    } finally {
      session.destroy();
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  });

  it("closes a connection whose call was in flight when the stop began as soon as that call is answered", async () => {
    const server = await startTestServer({ config: { shutdownTimeoutMs: 20_000 } });
    try {
      const { port } = new URL(server.url);
      const body = JSON.stringify({ name: "Answered, then closed" });
      const socket = net.connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      let response = "";
      socket.on("data", (chunk: Buffer) => (response += chunk.toString("utf8")));
      const closed = new Promise((resolve) => socket.once("close", resolve));
      socket.write(
        "POST /gatehouse.admin.v1.OrganizationService/CreateOrganization HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n" +
          `Authorization: Bearer ${server.adminToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
      await eventually(() => response.startsWith("HTTP/1.1 100 Continue\r\n\r\n"), { what: "the server to accept the call's headers" });
      const started = Date.now();
      const stopping = server.gatehouse.close();
      socket.write(body.slice(5));
      await closed;
      await stopping;
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(response).toMatch(/HTTP\/1\.1 200 /);
      expect(response).toContain('"organizationId"');
    } finally {
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  });
});
