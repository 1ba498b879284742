import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { dataFiles } from "../../src/config.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { spawnGatehouse } from "../support/process.js";

// Group commit acknowledges a write only once a sync of the log made it durable: a server killed with SIGKILL in the
// middle of concurrent writes has every write it acknowledged on disk when the database is opened again.
const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-kill-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it("keeps every acknowledged write when killed with SIGKILL under concurrent writes", { timeout: 120_000 }, async () => {
  const gatehouse = await spawnGatehouse({ GATEHOUSE_DATA_DIR: dataDir });
  const token = readFileSync(join(dataDir, "admin.pat"), "utf8").trim();
  const acknowledged: string[] = [];
  let killed = false;
  const createOrganization = async (name: string) => {
    const response = await fetch(`${gatehouse.url}/gatehouse.admin.v1.OrganizationService/CreateOrganization`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ name }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { organizationId: string }).organizationId;
  };
  const writer = async (worker: number) => {
    for (let i = 0; !killed; i++) {
      try {
        acknowledged.push(await createOrganization(`Org ${worker}-${i}`));
      } catch {
        return; // the connection died with the server
      }
    }
  };
  const writers = Array.from({ length: 16 }, (_, worker) => writer(worker));

  // Kill it in the middle of the load: once enough writes were acknowledged that batches of several formed.
  const batched = async () => {
    const text = await (await fetch(`${gatehouse.url}/metrics`)).text();
    const sum = Number(/^gatehouse_store_commits_per_sync_sum (\S+)$/m.exec(text)?.[1] ?? 0);
    const count = Number(/^gatehouse_store_commits_per_sync_count (\S+)$/m.exec(text)?.[1] ?? 0);
    return { sum, count };
  };
  let load = await batched();
  while (acknowledged.length < 300) load = await batched();
  gatehouse.child.kill("SIGKILL");
  killed = true;
  await gatehouse.exit;
  await Promise.all(writers);

  // Under 16 concurrent writers, one sync of the log made several writes durable.
  expect(load.sum / load.count).toBeGreaterThan(1.5);
  const store = createSqliteStore({ path: dataFiles({ dataDir }).database, synchronous: "FULL", busyTimeoutMs: 1_000 });
  try {
    const missing: string[] = [];
    for (const id of acknowledged) {
      if (!(await store.findOrganizationById(id))) missing.push(id);
      else if ((await store.listEvents({ aggregateType: "org", aggregateId: id, limit: 1 })).length !== 1) missing.push(`${id} (event)`);
    }
    expect(missing).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);
  } finally {
    await store.close();
  }
});
