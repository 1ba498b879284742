import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createTestDatabase } from "./postgres.js";
import { testCluster } from "./postgres-cluster.js";

/** What a test runs after it, last registered first. */
export type Cleanups = (() => Promise<void> | void)[];

/**
 * One fresh PostgreSQL database for several replicas, with the master key file they all read (a temp dir), and a
 * plain SQL client on it for the test's own checks; all removed by `cleanups`.
 */
export async function sharedDatabase(cleanups: Cleanups, prefix: string) {
  const database = await createTestDatabase(testCluster());
  cleanups.push(database.drop);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const keyFile = join(dir, "master.key");
  writeFileSync(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  const sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  cleanups.push(() => sql.end());
  return { url: database.url, keyFile, dir, sql };
}
