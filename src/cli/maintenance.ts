import { dataFiles } from "../config.js";
import { recoverAdmin } from "../commands/recover-admin.js";
import { createSqliteStore } from "../store/sqlite/sqlite-store.js";
import type { Store } from "../store/store.js";
import { systemClock } from "../support/clock.js";
import { withPrivateFileAround } from "../support/files.js";
import { createIdGenerator } from "../support/ids.js";
import { issueToken } from "../domain/token.js";
import { openDatabase } from "../startup/open-database.js";
import { openPostgresDatabase } from "../startup/open-postgres.js";
import { parsePostgresUrl } from "../store/postgres/database-url.js";
import { StartupError } from "../startup/startup-error.js";

/** Where a maintenance command works: the data dir's SQLite file, or a PostgreSQL database (`--database-url`). */
export interface DatabaseTarget {
  dataDir: string;
  databaseUrl?: string;
}

/** The one line naming the database a command worked on. */
export function databaseName(target: DatabaseTarget): string {
  return target.databaseUrl !== undefined ? (parsePostgresUrl(target.databaseUrl)?.display ?? target.databaseUrl) : dataFiles(target).database;
}

async function openTarget(target: DatabaseTarget): Promise<Store> {
  if (target.databaseUrl === undefined) {
    const { database } = dataFiles(target);
    return openDatabase(() => createSqliteStore({ path: database, synchronous: "FULL", busyTimeoutMs: 10_000 }), database);
  }
  const database = parsePostgresUrl(target.databaseUrl);
  if (!database) throw new StartupError(`--database-url must be a postgres:// or postgresql:// URL`);
  return openPostgresDatabase(database);
}

/** Opens the database (applying pending migrations), runs `work`, closes it. */
async function withStore<T>(target: DatabaseTarget, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openTarget(target);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** `gatehouse migrate`: applies pending migrations and exits; `serve` does the same at every start. */
export async function migrateDataDir(target: DatabaseTarget): Promise<void> {
  await withStore(target, async () => undefined);
}

/**
 * `gatehouse recover-admin`: a new IAM_OWNER token for `admin`, written to admin.pat (0600) — the
 * pending file is written before the commit and renamed after, as at bootstrap.
 */
export async function recoverAdminToken(target: DatabaseTarget) {
  const { dataDir } = target;
  return withStore(target, async (store) => {
    const ids = createIdGenerator();
    const token = issueToken(ids.next());
    const tokenFile = dataFiles({ dataDir }).adminToken;
    const result = await withPrivateFileAround(tokenFile, `${token.token}\n`, () => recoverAdmin({ store, clock: systemClock, ids }, token));
    return { userId: result.adminUserId, tokenId: result.tokenId, userCreated: result.userCreated, tokenFile };
  });
}
