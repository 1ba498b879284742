import { Code } from "@connectrpc/connect";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { startGatehouse } from "../../src/app.js";
import { dataFiles, loadConfig } from "../../src/config.js";
import { Clients } from "../support/clients.js";
import { failure } from "../support/errors.js";
import { eventually } from "../support/eventually.js";
import { LogCapture } from "../support/server.js";
import { type Cleanups, sharedDatabase } from "../support/shared-database.js";

// The database going away under a running replica (a restart, a failover, a network cut): every call answers
// `unavailable` with reason `store.unavailable` — the client's cue to retry — never `internal`, and the replica serves
// again by itself once the database is back. The cut is made by a TCP relay between Gatehouse and PostgreSQL that the
// test closes (every connection dropped, new ones refused) and opens again on the same port: the shared test cluster
// keeps running for the other tests.

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP relay to `target` on a port of its own that can be cut (all connections dropped, the port closed) and restored. */
async function cuttableRelay(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port), target.hostname);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server!.close(() => resolve());
    });
  await open();
  cleanups.push(cut);
  return { port: () => port, cut, restore: open };
}

describe("a replica whose PostgreSQL goes away", () => {
  it("answers reads and writes `unavailable` / store.unavailable while it is gone, logs no internal error, and serves again once it is back", { timeout: 120_000 }, async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-outage-");
    const database = new URL(shared.url);
    const relay = await cuttableRelay(database);
    const throughRelay = new URL(shared.url);
    throughRelay.port = String(relay.port());

    const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-outage-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const config = loadConfig([], { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_DATABASE_URL: throughRelay.toString(), GATEHOUSE_MASTER_KEY_FILE: shared.keyFile });
    const log = new LogCapture();
    const gatehouse = await startGatehouse({ config, logDestination: log });
    const clients = new Clients(gatehouse.url);
    cleanups.push(async () => {
      clients.close();
      await gatehouse.close();
    });
    expect(existsSync(dataFiles(config).adminToken)).toBe(true);
    const token = readFileSync(dataFiles(config).adminToken, "utf8").trim();
    const organizations = clients.client(OrganizationService, "connect-json-http1", { token });
    const { organizationId } = await organizations.createOrganization({ name: "Before the outage" });

    await relay.cut();
    const unavailable = { code: Code.Unavailable, reason: "store.unavailable" };
    expect(await failure(organizations.getOrganization({ organizationId }))).toMatchObject(unavailable);
    expect(await failure(organizations.createOrganization({ name: "During the outage" }))).toMatchObject(unavailable);
    expect(await failure(clients.client(OrganizationService, "grpc-h2c", { token }).listOrganizations({}))).toMatchObject(unavailable);
    const rest = await fetch(`${gatehouse.url}/v1/smtp`, { headers: { authorization: `Bearer ${token}` } });
    expect(rest.status).toBe(503);
    expect(await rest.json()).toMatchObject({ code: Code.Unavailable, details: [{ reason: "store.unavailable" }] });
    expect(log.parsed().filter((line) => line["msg"] === "internal error")).toEqual([]);

    await relay.restore();
    const back = await eventually(
      async () => {
        try {
          return await organizations.createOrganization({ name: "After the outage" });
        } catch {
          return undefined;
        }
      },
      { what: "a write to succeed once the database is back", timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(back.organizationId).not.toBe("");
    expect((await organizations.getOrganization({ organizationId })).organization?.name).toBe("Before the outage");
    // Nothing of the refused write was kept.
    const { organizations: listed } = await organizations.listOrganizations({});
    expect(listed.map((organization) => organization.name)).not.toContain("During the outage");
  });
});
