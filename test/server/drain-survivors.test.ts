import { rmSync } from "node:fs";
import net from "node:net";
import { describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { startTestServer } from "../support/server.js";

// A stopping server (Gatehouse.close) should get no more traffic: /readyz answers 503 "not ready" from the moment
// the stop begins, and an HTTP/1.1 connection still busy with a call is told `Connection: close` on what it is
// answered, so the client opens no further request on it.
describe("a server that is stopping", () => {
  it("is ready while it runs; once stopping, answers /readyz 503 not ready with Connection: close on a connection whose call is still in flight", async () => {
    const server = await startTestServer();
    try {
      const running = await fetch(`${server.url}/readyz`);
      expect({ status: running.status, body: await running.text() }).toEqual({ status: 200, body: "ok\n" });
      const { port } = new URL(server.url);
      const body = JSON.stringify({ name: "Created while stopping" });
      const socket = net.connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      let response = "";
      socket.on("data", (chunk: Buffer) => (response += chunk.toString("utf8")));
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
});
