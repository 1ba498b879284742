import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startGatehouse } from "../../src/app.js";
import { ensureBootstrapped } from "../../src/bootstrap.js";
import { loadConfig } from "../../src/config.js";
import type { Deps } from "../../src/context.js";
import { parseToken } from "../../src/domain/token.js";
import { createPostgresStore } from "../../src/store/postgres/pg-store.js";
import type { Store } from "../../src/store/store.js";
import { systemClock } from "../../src/support/clock.js";
import { createIdGenerator } from "../../src/support/ids.js";
import { createLogger } from "../../src/support/logger.js";
import { sha256Hex } from "../../src/support/crypto.js";
import { createTestDatabase } from "../support/postgres.js";
import { testCluster } from "../support/postgres-cluster.js";
import { LogCapture } from "../support/server.js";

// Review of the PostgreSQL replica wiring (fb3d650) and bootstrap-once (eef063b).

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe("the database URL's password is never logged", () => {
  // Was a bug, found in review (fb3d650, src/store/postgres/database-url.ts:9-10): only the userinfo password is masked, but libpq URLs (and
  // pg-connection-string, which Gatehouse's pg uses) also take the password as a query parameter:
  // postgres://gate@db/gatehouse?password=… is accepted, logs in with that password, and `display` keeps it verbatim —
  // in the `gatehouse listening` line, every start-up error line and `gatehouse migrate`'s output.
  it("a password given as ?password= is not in the `gatehouse listening` line", { timeout: 120_000 }, async () => {
    const database = await createTestDatabase(testCluster());
    cleanups.push(database.drop);
    const dir = tempDir("gatehouse-review-url-");
    const keyFile = join(dir, "master.key");
    writeFileSync(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const secret = `pw-${randomBytes(6).toString("hex")}`;
    const url = `${database.url}?password=${secret}`;
    const logs = new LogCapture();
    const config = loadConfig([], { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: join(dir, "data"), GATEHOUSE_DATABASE_URL: url, GATEHOUSE_MASTER_KEY_FILE: keyFile });
    const gatehouse = await startGatehouse({ config, logDestination: logs });
    cleanups.push(() => gatehouse.close());
    const listening = logs.parsed().find((line) => line.msg === "gatehouse listening");
    expect(listening).toBeDefined();
    expect(JSON.stringify(listening)).not.toContain(secret);
  });
});

describe("bootstrap once — the admin token of the one bootstrap is on disk", () => {
  // Was a bug, found in review (eef063b, src/bootstrap.ts:25-35 with src/support/files.ts:23-33): with PostgreSQL the data dir is not locked,
  // so two replicas may share one (the default ./data, a shared volume). Both write `admin.pat.pending` before their
  // commit: the loser's token overwrites the winner's pending file and the winner renames THE LOSER'S token (never
  // stored) into admin.pat — or the loser's failure removes the pending file and the winner's rename fails, which the
  // catch then reports as "another replica bootstrapped" (its own commit!) and no admin.pat is written at all.
  // Either way the bootstrap's admin token is lost. (The pending file needs a per-process name, and the catch must
  // not treat a failure after its own commit as a lost race.)
  it("two replicas bootstrapping on one data dir: admin.pat holds the token that was stored", { timeout: 60_000 }, async () => {
    const database = await createTestDatabase(testCluster());
    cleanups.push(database.drop);
    const storeA = await createPostgresStore({ url: database.url, poolSize: 2 });
    const storeB = await createPostgresStore({ url: database.url, poolSize: 2 });
    cleanups.push(() => storeA.close(), () => storeB.close());
    const masterKey = randomBytes(32);
    const tokenPath = join(tempDir("gatehouse-review-shared-dir-"), "admin.pat");
    // A commits first, after B has written its pending file; B commits after A (and loses).
    let bCommitting!: () => void;
    const bHasWritten = new Promise<void>((resolve) => (bCommitting = resolve));
    let aCommitted!: () => void;
    const aDone = new Promise<void>((resolve) => (aCommitted = resolve));
    const deps = (store: Store): Deps => ({ store, clock: systemClock, ids: createIdGenerator(), masterKey, externalUrl: "https://iam.example.com" });
    const a = deps({
      ...storeA,
      commit: async (commit) => {
        await bHasWritten;
        try {
          return await storeA.commit(commit);
        } finally {
          aCommitted();
        }
      },
    });
    const b = deps({
      ...storeB,
      commit: async (commit) => {
        bCommitting();
        await aDone;
        return storeB.commit(commit);
      },
    });
    await Promise.all([ensureBootstrapped(a, tokenPath, createLogger("silent")), ensureBootstrapped(b, tokenPath, createLogger("silent"))]);
    expect(existsSync(tokenPath)).toBe(true);
    const parsed = parseToken(readFileSync(tokenPath, "utf8").trim());
    const stored = parsed ? await storeA.findTokenById(parsed.tokenId) : undefined;
    expect(stored?.secretHash).toBe(parsed ? sha256Hex(parsed.secret) : "no token");
  });
});
