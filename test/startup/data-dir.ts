import Database from "better-sqlite3";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { ensureBootstrapped } from "../../src/bootstrap.js";
import { dataFiles } from "../../src/config.js";
import type { Deps } from "../../src/context.js";
import { openDatabase } from "../../src/startup/open-database.js";
import { checkMasterKey, loadMasterKey } from "../../src/startup/master-key.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { createIdGenerator } from "../../src/support/ids.js";
import { createLogger } from "../../src/support/logger.js";
import { TestClock } from "../support/server.js";

// In-process tests of the start-up and operator commands: the same functions the `gatehouse` command
// calls, run in the test's own thread (where a mutant is active), on real files in a temporary dir.

/** A temporary directory for this test file, deleted after it. */
export function useTempRoot(name: string): () => string {
  let root: string | undefined;
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  return () => (root ??= mkdtempSync(join(tmpdir(), `gatehouse-${name}-`)));
}

/** Opens (creating and migrating) the data dir's database the way `serve` does. */
export function openStore(dataDir: string): Store {
  const { database } = dataFiles({ dataDir });
  return openDatabase(() => createSqliteStore({ path: database, synchronous: "NORMAL", busyTimeoutMs: 5_000 }), database);
}

export interface BootstrappedDataDir {
  dataDir: string;
  files: ReturnType<typeof dataFiles>;
  masterKey: Buffer;
  adminToken: string;
}

/**
 * A data dir as a first `serve` leaves it, made by the same start-up steps (master key, probe,
 * bootstrap with admin.pat), without a listener: nothing else touches it while a test damages it.
 * `probe: false` leaves out the master-key probe, as in a database from before probes existed.
 */
export async function bootstrappedDataDir(dataDir: string, options: { probe?: boolean; clock?: TestClock } = {}): Promise<BootstrappedDataDir> {
  const { probe = true, clock = new TestClock() } = options;
  const files = dataFiles({ dataDir });
  const masterKey = loadMasterKey(files.masterKey, files.database);
  const store = openStore(dataDir);
  try {
    if (probe) await checkMasterKey(store, masterKey, files.masterKey);
    const deps: Deps = { store, clock, ids: createIdGenerator(), masterKey, externalUrl: "http://127.0.0.1:8080" };
    await ensureBootstrapped(deps, files.adminToken, createLogger("silent"));
  } finally {
    await store.close();
  }
  return { dataDir, files, masterKey, adminToken: readFileSync(files.adminToken, "utf8").trim() };
}

/** The mode bits of a file (0o600 …). */
export const modeOf = (stat: { mode: number }) => stat.mode & 0o777;

/**
 * Overwrites two pages in the middle of a database file with 0xff, as a failing disk would: from the first page of the
 * event log on (a table every bootstrapped database fills; or of `table`, `pages` of them), so that whatever reads the rows finds them damaged —
 * index pages alone would not do, since a copy (VACUUM INTO) rebuilds indexes from the rows without reading them.
 */
export function damagePages(database: string, table = "events", pages = 2): void {
  const db = new Database(database, { readonly: true });
  const pageSize = db.pragma("page_size", { simple: true }) as number;
  const [first] = db.prepare("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno LIMIT 1").all(table) as { pageno: number }[];
  db.close();
  const fd = openSync(database, "r+");
  try {
    writeSync(fd, Buffer.alloc(pages * pageSize, 0xff), 0, pages * pageSize, (first!.pageno - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}
