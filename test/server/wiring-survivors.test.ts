import { rmSync } from "node:fs";
import http2 from "node:http2";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { Clients } from "../support/clients.js";
import { eventually } from "../support/eventually.js";
import { startTestServer, TestClock, type TestServer } from "../support/server.js";
import { startSmtpServer } from "../support/smtp.js";
import { storedRows } from "../support/stored-rows.js";

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
    const outcome = await howStopEndsAfter(async (server) => {
      const session = http2.connect(server.url);
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const stream = session.request({ ":method": "GET", ":path": "/healthz" });
        stream.once("response", (headers) => resolve(headers[":status"]));
        stream.once("error", reject);
        stream.resume();
      });
      expect(status).toBe(200);
      await new Promise<void>((resolve) => session.close(() => resolve()));
    });
    // Nothing is left to drain (HTTP/2 requests are the sessions' to track).
    expect(outcome).toBe("stopped");
  });

  it("stops as soon as its connections are done after a client dropped its connection mid-request, not at the drain's deadline", async () => {
    const outcome = await howStopEndsAfter(async (server) => {
      // A form post whose body never comes in full: the request is in flight when the client goes, and the page's
      // access line (499) shows the server saw it end.
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      const path = "/ui/login/mail/verification";
      socket.end(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\norigin: null\r\nsec-fetch-site: same-origin\r\ncontent-length: 100\r\n\r\ncode=`);
      await eventually(() => server.logs.parsed().some((line) => line["msg"] === "page" && line["path"] === path && line["status"] === 499), { what: "the dropped post's access line" });
    });
    // Nothing is left to drain: the dropped connection is not counted again once its request ended.
    expect(outcome).toBe("stopped");
  });

  it("deletes a sent mail's record once the configured retention (GATEHOUSE_MAIL_RETENTION_DAYS) has passed, not the default's", async () => {
    const DAY = 86_400_000;
    const clock = new TestClock(new Date(), true);
    const server = await startTestServer({ clock, config: { mail: { smtpTimeoutMs: 2_000, pollMs: 20, maxAttempts: 3, retryBaseMs: 100, retentionMs: DAY } } });
    const relay = await startSmtpServer({ tls: "none" });
    const clients = new Clients(server.url);
    try {
      const admin = { token: server.adminToken };
      await clients.client(SmtpService, "connect-json-http1", admin).createSmtpConfig({ senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: false, host: `127.0.0.1:${relay.port}`, user: "" });
      const { userId } = await clients.client(UserService, "connect-json-http1", admin).createHumanUser({ userName: "retained", profile: { firstName: "Re", lastName: "Tained" }, email: { email: "retained@example.com" } });
      const statuses = async () => (await storedRows<{ status: string }>(server, "select status from outbox where user_id = ?", userId)).map((row) => row.status);
      await eventually(async () => (await statuses()).includes("sent"), { what: "the mail to be sent" });
      // Past the configured day (the default keeps a week), and past the sweep's minute: the record goes.
      clock.advance(DAY + 120_000);
      await eventually(async () => (await statuses()).length === 0, { what: "the sent mail's record to be deleted" });
      expect(await statuses()).toEqual([]);
    } finally {
      clients.close();
      await server.dispose();
      await relay.close();
    }
  });
});

/**
 * Starts a server whose drain may last 60 s, runs `work` against it, then stops it: "stopped" when the stop ended
 * within 5 s (nothing was left to drain), "still draining" otherwise. The server is gone afterwards either way.
 */
async function howStopEndsAfter(work: (server: TestServer) => Promise<void>): Promise<string> {
  const server = await startTestServer({ config: { shutdownTimeoutMs: 60_000 } });
  let stopping: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    await work(server);
    stopping = server.gatehouse.close();
    return await Promise.race([stopping.then(() => "stopped"), new Promise<string>((resolve) => (timer = setTimeout(() => resolve("still draining"), 5_000)))]);
  } finally {
    clearTimeout(timer);
    // A stop that did not finish in time (or never began) is awaited before the data dir goes.
    await (stopping ?? server.gatehouse.close());
    rmSync(server.dataDir, { recursive: true, force: true });
  }
}
