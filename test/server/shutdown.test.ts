import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnGatehouse } from "../support/process.js";

const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-shutdown-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("SIGTERM", () => {
  it("lets an in-flight call complete, refuses new connections, and exits 0", async () => {
    const gatehouse = await spawnGatehouse({ GATEHOUSE_DATA_DIR: dataDir });
    const token = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
    const { port } = new URL(gatehouse.url);
    const body = JSON.stringify({ name: "Created during shutdown" });

    // A call whose body is still arriving when the signal comes: it is in flight.
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    let response = "";
    socket.on("data", (chunk) => (response += chunk.toString()));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write(
      `POST /gatehouse.admin.v1.OrganizationService/CreateOrganization HTTP/1.1\r\nHost: x\r\n` +
        `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));

    gatehouse.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The listener is closed: a new connection is refused.
    await expect(fetch(`${gatehouse.url}/metrics`)).rejects.toThrow();

    socket.write(body.slice(5));
    await closed;
    expect(response).toMatch(/^HTTP\/1.1 200/);
    expect(response).toContain('"organizationId"');
    expect(await gatehouse.exit).toBe(0);
    expect(gatehouse.lines.some((line) => line.includes('"gatehouse stopped"'))).toBe(true);
  });
});
