import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { eventually } from "./eventually.js";
import { type ClusterAddress, createDatabase } from "./postgres-server.js";

/**
 * A REAL PostgreSQL 15 for the tests (test/support/postgres-server.ts, which the bench uses too): launched once per
 * vitest run (test/support/postgres-global-setup.ts) in the background — a run whose tests need no PostgreSQL neither
 * waits for it nor fails without it — and stopped and removed at the end. Never a mock: the store's contract is
 * proven against the server it runs on.
 */

export { type ClusterAddress, launchPostgresCluster, type PostgresCluster, withDatabase } from "./postgres-server.js";

/** Waits until the run's cluster accepts connections; fails with the reason when it could not start. */
export async function clusterReady(cluster: ClusterAddress): Promise<void> {
  const status = await eventually(() => (existsSync(cluster.statusFile) ? readFileSync(cluster.statusFile, "utf8") : undefined), {
    what: "the test PostgreSQL cluster to start",
    timeoutMs: 180_000,
    intervalMs: 50,
  });
  if (status !== "ready") throw new Error(`the test PostgreSQL cluster did not start: ${status.replace(/^failed\n/, "")}`);
}

/**
 * A new, empty database on the run's cluster (`CREATE DATABASE`), for one test: its URL, and `drop()` that removes
 * it (ending any session still on it).
 */
export async function createTestDatabase(cluster: ClusterAddress): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  await clusterReady(cluster);
  return createDatabase(cluster.url, `gatehouse_test_${randomBytes(6).toString("hex")}`);
}
