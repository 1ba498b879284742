import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { Clients } from "./clients.js";
import { type GatehouseProcess, spawnGatehouse } from "./process.js";
import type { Cleanups } from "./shared-database.js";

/** One Gatehouse replica: its own process, port and data dir, on the shared database. */
export interface ReplicaProcess {
  process: GatehouseProcess;
  clients: Clients;
  dataDir: string;
}

/** Starts a Gatehouse process on the shared database (with `env` added); stopped with SIGTERM by `cleanups`. */
export async function replicaProcess(cleanups: Cleanups, shared: { url: string; keyFile: string }, env: Record<string, string> = {}): Promise<ReplicaProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-replica-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const process = await spawnGatehouse({
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_DATABASE_URL: shared.url,
    GATEHOUSE_MASTER_KEY_FILE: shared.keyFile,
    ...env,
  });
  const clients = new Clients(process.url);
  cleanups.push(async () => {
    clients.close();
    if (process.child.exitCode === null && process.child.signalCode === null) {
      process.child.kill("SIGTERM");
      await process.exit;
    }
  });
  return { process, clients, dataDir };
}

/**
 * Three replicas; the first bootstraps (started alone, so it is the one), and its admin token (IAM_OWNER) serves all
 * three. The other two start together.
 */
export async function threeReplicaProcesses(cleanups: Cleanups, shared: { url: string; keyFile: string }, env: Record<string, string> = {}) {
  const first = await replicaProcess(cleanups, shared, env);
  const tokenFile = join(first.dataDir, "admin.pat");
  expect(existsSync(tokenFile)).toBe(true);
  const adminToken = readFileSync(tokenFile, "utf8").trim();
  const replicas = [first, ...(await Promise.all([replicaProcess(cleanups, shared, env), replicaProcess(cleanups, shared, env)]))];
  return { replicas, adminToken };
}
