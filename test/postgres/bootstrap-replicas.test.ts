import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { OrganizationService } from "../../gen/gatehouse/admin/v1/organization_pb.js";
import { type Gatehouse, startGatehouse } from "../../src/app.js";
import { ensureBootstrapped } from "../../src/bootstrap.js";
import { dataFiles, loadConfig } from "../../src/config.js";
import type { Deps } from "../../src/context.js";
import { systemClock } from "../../src/support/clock.js";
import { createIdGenerator } from "../../src/support/ids.js";
import { createLogger } from "../../src/support/logger.js";
import { createPostgresStore } from "../../src/store/postgres/pg-store.js";
import { Clients } from "../support/clients.js";
import { LogCapture } from "../support/server.js";
import { type Cleanups, sharedDatabase as sharedDatabaseFor } from "../support/shared-database.js";

// Bootstrap across replicas (issue 13, item 2): replicas started at the same time on one empty PostgreSQL database
// bootstrap it exactly once — one instance, one admin, its events once — and every replica serves it. Only the
// replica whose bootstrap committed writes an admin.pat; a replica that lost the race writes none (its token was
// never stored) and serves the winner's instance.

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sharedDatabase = () => sharedDatabaseFor(cleanups, "gatehouse-bootstrap-replicas-");

/** A Gatehouse replica on the shared database, its own data dir and port; the token file it wrote, if any. */
async function replica(shared: { url: string; keyFile: string }): Promise<{ gatehouse: Gatehouse; clients: Clients; tokenFile: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-bootstrap-replica-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig([], { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_DATABASE_URL: shared.url, GATEHOUSE_MASTER_KEY_FILE: shared.keyFile });
  const gatehouse = await startGatehouse({ config, logDestination: new LogCapture() });
  const clients = new Clients(gatehouse.url);
  cleanups.push(async () => {
    clients.close();
    await gatehouse.close();
  });
  return { gatehouse, clients, tokenFile: dataFiles(config).adminToken };
}

const count = async (sql: pg.Client, query: string) => (await sql.query<{ n: number }>(query)).rows[0]!.n;

/** Token files still pending beside `tokenFile` (any process's). */
const pendingFilesBeside = (tokenFile: string) => readdirSync(dirname(tokenFile)).filter((name) => name.endsWith(".pending"));

describe("replicas starting together on an empty PostgreSQL database", () => {
  it("bootstrap it once: one instance, one admin, its events once, one admin.pat, and every replica serves", { timeout: 120_000 }, async () => {
    const shared = await sharedDatabase();
    const replicas = await Promise.all([replica(shared), replica(shared), replica(shared)]);
    expect(await count(shared.sql, "SELECT count(*)::int AS n FROM instances")).toBe(1);
    expect(await count(shared.sql, "SELECT count(*)::int AS n FROM organizations")).toBe(1);
    expect(await count(shared.sql, "SELECT count(*)::int AS n FROM users")).toBe(1);
    expect(await count(shared.sql, "SELECT count(*)::int AS n FROM personal_access_tokens")).toBe(1);
    expect(await count(shared.sql, "SELECT count(*)::int AS n FROM events WHERE type = 'instance.added'")).toBe(1);
    const { rows: events } = await shared.sql.query<{ type: string; n: number }>("SELECT type, count(*)::int AS n FROM events GROUP BY type ORDER BY type");
    expect(events.every((event) => event.n === 1)).toBe(true);
    // One replica wrote the admin token; the others wrote no file (not even a pending one).
    const written = replicas.filter((r) => existsSync(r.tokenFile));
    expect(written).toHaveLength(1);
    for (const r of replicas) expect(pendingFilesBeside(r.tokenFile)).toEqual([]);
    const adminToken = readFileSync(written[0]!.tokenFile, "utf8").trim();
    const [instance] = (await shared.sql.query<{ default_org_id: string }>("SELECT default_org_id FROM instances")).rows;
    // Every replica serves the one instance with that token.
    for (const r of replicas) {
      const { organization } = await r.clients.client(OrganizationService, "connect-json-http1", { token: adminToken }).getOrganization({ organizationId: instance!.default_org_id });
      expect(organization?.name).toBe("Gatehouse");
    }
  });
});

describe("a replica whose bootstrap lost the race", () => {
  it("reads the winner's instance, writes no token file, and says another replica bootstrapped it", async () => {
    const shared = await sharedDatabase();
    const store = await createPostgresStore({ url: shared.url, poolSize: 2 });
    cleanups.push(() => store.close());
    const masterKey = randomBytes(32);
    const deps = (overrides: Partial<Deps["store"]> = {}): Deps => ({
      store: { ...store, ...overrides },
      clock: systemClock,
      ids: createIdGenerator(),
      masterKey,
      externalUrl: "https://iam.example.com",
    });
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-bootstrap-loser-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const winnerToken = join(dir, "winner.pat");
    const loserToken = join(dir, "loser.pat");
    // The loser found no instance, then the winner bootstrapped before the loser committed.
    let first = true;
    const loser = deps({
      getInstance: async () => {
        if (!first) return store.getInstance();
        first = false;
        await ensureBootstrapped(deps(), winnerToken, createLogger("silent"));
        return undefined;
      },
    });
    const logs = new LogCapture();
    await ensureBootstrapped(loser, loserToken, createLogger("info", logs));
    expect(existsSync(winnerToken)).toBe(true);
    expect(existsSync(loserToken)).toBe(false);
    expect(pendingFilesBeside(loserToken)).toEqual([]);
    expect(await count(shared.sql, "SELECT count(*)::int AS n FROM instances")).toBe(1);
    expect(await count(shared.sql, "SELECT count(*)::int AS n FROM events WHERE type = 'instance.added'")).toBe(1);
    const line = logs.parsed().find((l) => l.instanceId !== undefined);
    expect(line).toMatchObject({ instanceId: (await store.getInstance())?.id });
    expect(String(line?.msg)).toMatch(/another replica/);
  });
});
