import { dataFiles } from "../config.js";
import { recoverAdmin } from "../commands/recover-admin.js";
import { createSqliteStore } from "../store/sqlite/sqlite-store.js";
import type { Store } from "../store/store.js";
import { systemClock } from "../support/clock.js";
import { withPrivateFileAround } from "../support/files.js";
import { createIdGenerator } from "../support/ids.js";
import { issueToken } from "../domain/token.js";
import { openDatabase } from "../startup/open-database.js";

/** Opens the data dir's database (applying pending migrations), runs `work`, closes it. */
async function withStore<T>(dataDir: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = openDatabase(() => createSqliteStore({ path: dataFiles({ dataDir }).database, synchronous: "FULL", busyTimeoutMs: 10_000 }), dataFiles({ dataDir }).database);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** `gatehouse migrate`: applies pending migrations and exits; `serve` does the same at every start. */
export async function migrateDataDir(dataDir: string): Promise<void> {
  await withStore(dataDir, async () => undefined);
}

/**
 * `gatehouse recover-admin`: a new IAM_OWNER token for `admin`, written to admin.pat (0600) — the
 * pending file is written before the commit and renamed after, as at bootstrap.
 */
export async function recoverAdminToken(dataDir: string) {
  return withStore(dataDir, async (store) => {
    const ids = createIdGenerator();
    const token = issueToken(ids.next());
    const tokenFile = dataFiles({ dataDir }).adminToken;
    const result = await withPrivateFileAround(tokenFile, `${token.token}\n`, () => recoverAdmin({ store, clock: systemClock, ids }, token));
    return { userId: result.adminUserId, tokenId: result.tokenId, userCreated: result.userCreated, tokenFile };
  });
}
