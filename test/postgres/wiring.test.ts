import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/gatehouse.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { randomBytes } from "node:crypto";
import { checkMasterKey, PROBE_CONTEXT } from "../../src/startup/master-key.js";
import { openPostgresDatabase } from "../../src/startup/open-postgres.js";
import { createPostgresStore } from "../../src/store/postgres/pg-store.js";
import { sealSecret } from "../../src/support/secret-box.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { createTestDatabase, withDatabase } from "../support/postgres.js";
import { testCluster } from "../support/postgres-cluster.js";

// Choosing PostgreSQL: `--database-url` / GATEHOUSE_DATABASE_URL (SQLite stays the default), the shared master key
// file it requires, `gatehouse migrate --database-url`, and the one line a start that cannot open the database prints
// (never with the password).

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the database setting", () => {
  it("SQLite in the data dir by default; a postgres:// URL selects PostgreSQL and is shown without its password", () => {
    expect(loadConfig([], {}).database).toBeUndefined();
    const config = loadConfig(["--database-url", "postgres://gate:s3cret@db.example:5432/gatehouse", "--master-key-file", "/etc/gatehouse/master.key"], {});
    expect(config.database).toEqual({ url: "postgres://gate:s3cret@db.example:5432/gatehouse", display: "postgres://gate:***@db.example:5432/gatehouse" });
    expect(config.masterKeyFile).toBe("/etc/gatehouse/master.key");
    expect(loadConfig([], { GATEHOUSE_DATABASE_URL: "postgresql://db/g", GATEHOUSE_MASTER_KEY_FILE: "/k" }).database?.display).toBe("postgresql://db/g");
  });

  it("refuses another scheme, and a shared database without a shared key file", () => {
    expect(() => loadConfig([], { GATEHOUSE_DATABASE_URL: "mysql://db/g", GATEHOUSE_MASTER_KEY_FILE: "/k" })).toThrow(
      new ConfigError("GATEHOUSE_DATABASE_URL must be a postgres:// or postgresql:// URL"),
    );
    expect(() => loadConfig(["--database-url", "postgres://db/g"], {})).toThrow(ConfigError);
    expect(() => loadConfig(["--database-url", "postgres://db/g"], {})).toThrow(/needs --master-key-file/);
  });
});

describe("gatehouse migrate --database-url", () => {
  it("applies every migration to the PostgreSQL database and says which (without the password)", async () => {
    const database = await createTestDatabase(testCluster());
    cleanups.push(database.drop);
    const outcome = await runCli(["migrate", "--database-url", database.url]);
    expect(outcome).toEqual({ kind: "done", lines: [`database ${database.url} is migrated`] });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    cleanups.push(() => client.end());
    expect((await client.query("SELECT last_sequence FROM commit_counters")).rows).toEqual([{ last_sequence: "0" }]);
  });
});

describe("a start that cannot open the database", () => {
  it("a database that does not exist: one line naming it, without the password", async () => {
    const url = withDatabase(testCluster().url, "no_such_database").replace("postgres@", "postgres:hidden@");
    const error = await openPostgresDatabase({ url, display: url.replace("hidden", "***") }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toMatch(/^database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/no_such_database does not exist \(3D000\): create it/);
    expect((error as Error).message).not.toMatch(/hidden/);
  });

  it("a server that does not listen: cannot be reached", async () => {
    const url = "postgres://postgres@127.0.0.1:1/gatehouse";
    const error = await openPostgresDatabase({ url, display: url }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe("database postgres://postgres@127.0.0.1:1/gatehouse cannot be reached (ECONNREFUSED): check the host and port, and that PostgreSQL runs");
  });
});

describe("replicas starting together with different master keys", () => {
  it("the replica whose probe was not the one kept refuses to start, though it found no probe at first", async () => {
    const database = await createTestDatabase(testCluster());
    cleanups.push(database.drop);
    const store = await createPostgresStore({ url: database.url });
    cleanups.push(() => store.close());
    const [keyA, keyB] = [randomBytes(32), randomBytes(32)];
    // B read the probe (none yet), then A stored its own before B stored B's.
    let firstRead = true;
    const racingB = {
      ...store,
      getMasterKeyProbe: async () => {
        if (!firstRead) return store.getMasterKeyProbe();
        firstRead = false;
        await store.setMasterKeyProbe(sealSecret(keyA, "gatehouse", PROBE_CONTEXT));
        return undefined;
      },
    };
    await expect(checkMasterKey(racingB, keyB, "/keys/b.key")).rejects.toThrow("master key /keys/b.key does not open this database's sealed data");
    await expect(checkMasterKey(store, keyA, "/keys/a.key")).resolves.toBeUndefined();
  });
});
