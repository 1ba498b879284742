import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync, closeSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dataFiles } from "../../src/config.js";
import { expectOneLineFailure, freshDir, killStartedCommands, runGatehouse, serveGatehouse, spawnGatehouse } from "../support/command.js";
import { startTestServer } from "../support/server.js";

// A data dir with a database in it is only opened with the right key, intact, migratable, and by one
// server at a time. Each case is the real command on a copy of a real data dir.
const root = freshDir("safety");
let realDataDir = "";
afterEach(killStartedCommands);
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(async () => {
  // A real data dir (bootstrapped, with its master key and sealed probe), made by the same start-up code.
  realDataDir = join(root, "real");
  const server = await startTestServer({ dataDir: realDataDir });
  await server.stop();
});

/** A copy of the real data dir, to damage. */
function copyOfRealDataDir(name: string) {
  const dataDir = join(root, name);
  cpSync(realDataDir, dataDir, { recursive: true });
  return { dataDir, ...dataFiles({ dataDir }) };
}

const newKey = () => `${randomBytes(32).toString("base64")}\n`;
const serveArgs = (dataDir: string) => ["serve", "--port", "0", "--data-dir", dataDir];

describe("the database", () => {
  it("not a database (random bytes), with a valid master key: one line, restore from a backup", async () => {
    const dataDir = join(root, "not-a-db");
    mkdirSync(dataDir);
    const { database, masterKey } = dataFiles({ dataDir });
    writeFileSync(database, randomBytes(64 * 1024));
    writeFileSync(masterKey, newKey(), { mode: 0o600 });
    const result = await runGatehouse(serveArgs(dataDir));
    expectOneLineFailure(result, `database ${database} is not a database or is corrupted (SQLITE_NOTADB): restore it from a backup (gatehouse restore)`);
    expect(existsSync(dataFiles({ dataDir }).adminToken)).toBe(false);
  });

  it("corrupted (a real database with bytes overwritten in the middle): one line, restore from a backup", async () => {
    const { dataDir, database } = copyOfRealDataDir("corrupted");
    const size = statSync(database).size;
    const fd = openSync(database, "r+");
    writeSync(fd, Buffer.alloc(8192, 0xff), 0, 8192, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    const result = await runGatehouse(serveArgs(dataDir));
    expectOneLineFailure(result, `database ${database} is not a database or is corrupted (SQLITE_CORRUPT): restore it from a backup (gatehouse restore)`);
  });

  it("a migration that fails (a table the first migration creates exists with other columns): one line with SQLite's reason", async () => {
    const dataDir = join(root, "migration-fails");
    mkdirSync(dataDir);
    const { database, masterKey } = dataFiles({ dataDir });
    const db = new Database(database);
    db.exec("CREATE TABLE events (id TEXT, something_else TEXT)");
    db.close();
    writeFileSync(masterKey, newKey(), { mode: 0o600 });
    const result = await runGatehouse(serveArgs(dataDir));
    expectOneLineFailure(result, `database ${database} could not be migrated (table \`events\` already exists): restore a backup or run the matching Gatehouse version`);
    expect(existsSync(dataFiles({ dataDir }).adminToken)).toBe(false);
  });
});

describe("the master key", () => {
  it("not 32 base64 bytes: one line naming the key file", async () => {
    const { dataDir, masterKey } = copyOfRealDataDir("bad-key");
    writeFileSync(masterKey, "c2hvcnQ=\n");
    const result = await runGatehouse(serveArgs(dataDir));
    expectOneLineFailure(result, `master key ${masterKey} is not 32 base64-encoded bytes: restore the right key file`);
  });

  it("another valid key, which does not open the sealed data: one line, and the key file is left as it was", async () => {
    const { dataDir, masterKey } = copyOfRealDataDir("wrong-key");
    const otherKey = newKey();
    writeFileSync(masterKey, otherKey);
    const result = await runGatehouse(serveArgs(dataDir));
    expectOneLineFailure(result, `master key ${masterKey} does not open this database's sealed data: use the key this data dir was created with`);
    expect(readFileSync(masterKey, "utf8")).toBe(otherKey);
  });

  it("missing while the database exists: refuses, and does NOT create a new key file", async () => {
    const { dataDir, masterKey, database } = copyOfRealDataDir("no-key");
    rmSync(masterKey);
    const result = await runGatehouse(serveArgs(dataDir));
    expectOneLineFailure(
      result,
      `master key ${masterKey} is missing but the database ${database} exists: restore the key file from your backup (a new key cannot open the sealed secrets)`,
    );
    expect(existsSync(masterKey)).toBe(false);
  });
});

describe("one server per data dir", () => {
  it("a second server on a locked data dir refuses with one line naming the first; the first keeps serving", async () => {
    const { dataDir } = copyOfRealDataDir("locked");
    const first = await serveGatehouse(dataDir);
    const second = await runGatehouse(serveArgs(dataDir));
    expectOneLineFailure(second, `another gatehouse (pid ${first.command.pid}) is using the data dir ${dataDir}: stop it first, or give this server its own --data-dir`);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    expect(readFileSync(join(dataDir, "gatehouse.lock"), "utf8").trim()).toBe(String(first.command.pid));

    // A crash (kill -9) leaves the lock file behind; its owner is gone, so the next start takes it over.
    first.command.child.kill("SIGKILL");
    await first.command.waitForExit();
    expect(existsSync(join(dataDir, "gatehouse.lock"))).toBe(true);
    const restarted = spawnGatehouse(serveArgs(dataDir));
    await restarted.waitForLog("gatehouse listening");
    expect(readFileSync(join(dataDir, "gatehouse.lock"), "utf8").trim()).toBe(String(restarted.pid));
  });
});
