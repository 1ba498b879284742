import { rmSync } from "node:fs";
import http2 from "node:http2";
import { describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { Clients } from "../support/clients.js";
import { startTestServer } from "../support/server.js";

// What start-up wires from the configuration into the parts it builds (app.ts, server.ts). Each test starts its own
// server inside the test, so the wiring is part of what it checks.

describe("a server's start-up wiring", () => {
  it("on FULL durability, reports per sync of its log how many writes that sync made durable (group commit)", async () => {
    const server = await startTestServer({ config: { dbSynchronous: "FULL" } });
    const clients = new Clients(server.url);
    try {
      await clients.client(OrganizationService, "connect-json-http1", { token: server.adminToken }).createOrganization({ name: "Synced" });
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const count = Number(/^gatehouse_store_commits_per_sync_count (\d+)$/m.exec(metrics)?.[1]);
      const sum = Number(/^gatehouse_store_commits_per_sync_sum (\d+)$/m.exec(metrics)?.[1]);
      // The bootstrap's commits and the write above were made durable by at least one sync, each counted once.
      expect(count).toBeGreaterThanOrEqual(1);
      expect(sum).toBeGreaterThanOrEqual(2);
    } finally {
      clients.close();
      await server.dispose();
    }
  });

  it("tells each HTTP/2 connection the configured limit of concurrent streams (SETTINGS_MAX_CONCURRENT_STREAMS)", async () => {
    const server = await startTestServer({ config: { http2MaxConcurrentStreams: 7 } });
    const session = http2.connect(server.url);
    try {
      const settings = await new Promise<http2.Settings>((resolve, reject) => {
        session.once("remoteSettings", resolve);
        session.once("error", reject);
      });
      expect(settings.maxConcurrentStreams).toBe(7);
    } finally {
      session.destroy();
      await server.dispose();
    }
  });

  it("stops as soon as its connections are done after HTTP/2 calls, not at the drain's deadline", async () => {
    const server = await startTestServer({ config: { shutdownTimeoutMs: 60_000 } });
    let stopping: Promise<void> | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const session = http2.connect(server.url);
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const stream = session.request({ ":method": "GET", ":path": "/healthz" });
        stream.once("response", (headers) => resolve(headers[":status"]));
        stream.once("error", reject);
        stream.resume();
      });
      expect(status).toBe(200);
      await new Promise<void>((resolve) => session.close(() => resolve()));
      // Nothing is left to drain: the stop does not wait out its 60 s (HTTP/2 requests are the sessions' to track).
      stopping = server.gatehouse.close();
      const outcome = await Promise.race([stopping.then(() => "stopped"), new Promise((resolve) => (timer = setTimeout(() => resolve("still draining"), 5_000)))]);
      expect(outcome).toBe("stopped");
    } finally {
      clearTimeout(timer);
      // A stop that did not finish in time (or never began) is awaited before the data dir goes.
      await (stopping ?? server.gatehouse.close());
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  });
});
