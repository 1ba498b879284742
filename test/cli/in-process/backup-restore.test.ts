import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { backupDatabase, describeBackup } from "../../../src/cli/backup.js";
import { restoreDatabase } from "../../../src/cli/restore.js";
import { dataFiles } from "../../../src/config.js";
import { StartupError } from "../../../src/startup/startup-error.js";
import { summarizeDatabase } from "../../../src/store/sqlite/sqlite-file.js";
import { bootstrappedDataDir, damagePages, modeOf, openStore, useTempRoot } from "../../startup/data-dir.js";
import { thrownBy } from "../../support/thrown.js";

// `gatehouse backup` and `gatehouse restore` in the test's own process (test/cli/backup-restore.test.ts runs
// the real command under load): a backup never overwrites and never holds the key; a restore goes only into
// an empty dir, only with the key the backup was sealed under, and checks both before writing anything.
const root = useTempRoot("backup");
let n = 0;
const fresh = (name: string) => join(root(), `${name}-${++n}`);

const startupError = (work: () => unknown): StartupError => thrownBy(StartupError, work);

/** A bootstrapped source data dir and a backup of it. */
async function backedUp(options: { probe?: boolean } = {}) {
  const source = await bootstrappedDataDir(fresh("source"), options);
  const file = fresh("backup.db");
  backupDatabase(source.files.database, file);
  return { source, file };
}

describe("backupDatabase", () => {
  it("writes a checked copy (0600) and says how many events it holds up to which sequence; no partial file stays", async () => {
    const source = await bootstrappedDataDir(fresh("source"));
    const dir = fresh("backups");
    mkdirSync(dir);
    const target = join(dir, "gatehouse.db.bak");
    const summary = backupDatabase(source.files.database, target);
    expect(summary).toEqual({ file: target, ...summarizeDatabase(source.files.database) });
    expect(summary.events).toBeGreaterThan(0);
    expect(modeOf(statSync(target))).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["gatehouse.db.bak"]);
    // The key stays out of the backup: neither its text nor its raw bytes.
    const bytes = readFileSync(target);
    expect(bytes.includes(source.masterKey)).toBe(false);
    expect(bytes.includes(Buffer.from(source.masterKey.toString("base64")))).toBe(false);
  });

  it("no database in the data dir: names the path and the flag to check", () => {
    const database = join(fresh("empty"), "gatehouse.db");
    expect(startupError(() => backupDatabase(database, fresh("x.db"))).message).toBe(`no database at ${database}: check --data-dir`);
  });

  it("an existing target is never overwritten", async () => {
    const { source, file } = await backedUp();
    const before = readFileSync(file);
    expect(startupError(() => backupDatabase(source.files.database, file)).message).toBe(`${file} exists already: choose a new file (a backup never overwrites)`);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("a copy that fails (damaged source): says so with SQLite's reason and removes the partial file", async () => {
    const source = await bootstrappedDataDir(fresh("source"));
    damagePages(source.files.database);
    const dir = fresh("backups");
    mkdirSync(dir);
    const error = startupError(() => backupDatabase(source.files.database, join(dir, "b.db")));
    expect(error.message).toBe(`backup of ${source.files.database} failed: database disk image is malformed`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("describeBackup: a file that is no intact, bootstrapped Gatehouse database is refused, saying why", async () => {
    const migrated = fresh("migrated");
    await openStore(migrated).close();
    const database = dataFiles({ dataDir: migrated }).database;
    expect(startupError(() => describeBackup(database)).message).toBe(`${database} is not an intact Gatehouse database (it holds no bootstrapped instance)`);
    const garbage = fresh("garbage.db");
    writeFileSync(garbage, randomBytes(8192));
    expect(startupError(() => describeBackup(garbage)).message).toBe(`${garbage} is not an intact Gatehouse database (file is not a database)`);
  });
});

describe("restoreDatabase", () => {
  it("into a missing dir: creates it (0700) with the backup as its database and the key, both 0600 whatever the backup's mode, and returns its summary", async () => {
    const { source, file } = await backedUp();
    // Backups get copied around by other tools; the restored database is private again.
    chmodSync(file, 0o644);
    const dataDir = fresh("restored");
    const files = dataFiles({ dataDir });
    const summary = restoreDatabase({ from: file, dataDir, masterKeyFile: source.files.masterKey }, files);
    expect(summary).toEqual(summarizeDatabase(file));
    expect(readFileSync(files.database).equals(readFileSync(file))).toBe(true);
    expect(readFileSync(files.masterKey, "utf8")).toBe(`${source.masterKey.toString("base64")}\n`);
    expect([modeOf(statSync(dataDir)), modeOf(statSync(files.database)), modeOf(statSync(files.masterKey))]).toEqual([0o700, 0o600, 0o600]);
  });

  it("into an existing empty dir", async () => {
    const { source, file } = await backedUp();
    const dataDir = fresh("empty");
    mkdirSync(dataDir);
    restoreDatabase({ from: file, dataDir, masterKeyFile: source.files.masterKey }, dataFiles({ dataDir }));
    expect(readdirSync(dataDir).sort()).toEqual(["gatehouse.db", "master.key"]);
  });

  it("never into a dir that holds anything: refused, the dir left as it was", async () => {
    const { source, file } = await backedUp();
    const dataDir = fresh("busy");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, "notes.txt"), "mine\n");
    const error = startupError(() => restoreDatabase({ from: file, dataDir, masterKeyFile: source.files.masterKey }, dataFiles({ dataDir })));
    expect(error.message).toBe(`data dir ${dataDir} is not empty: restore only into an empty data dir (stop the server and move the old one aside)`);
    expect(readdirSync(dataDir)).toEqual(["notes.txt"]);
  });

  it("with another valid key: refused before anything is written", async () => {
    const { file } = await backedUp();
    const otherKey = fresh("other.key");
    writeFileSync(otherKey, `${randomBytes(32).toString("base64")}\n`);
    const dataDir = fresh("wrong-key");
    const error = startupError(() => restoreDatabase({ from: file, dataDir, masterKeyFile: otherKey }, dataFiles({ dataDir })));
    expect(error.message).toBe(`master key ${otherKey} does not open this backup's sealed data: use the key of the data dir the backup was taken from`);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("with a key file that is missing or malformed: says what to pass, writes nothing", async () => {
    const { file } = await backedUp();
    const dataDir = fresh("bad-key");
    const missing = fresh("missing.key");
    expect(startupError(() => restoreDatabase({ from: file, dataDir, masterKeyFile: missing }, dataFiles({ dataDir }))).message).toBe(
      `master key ${missing} cannot be read (ENOENT): pass the key file of the backed-up data dir with --master-key`,
    );
    const malformed = fresh("malformed.key");
    writeFileSync(malformed, "c2hvcnQ=\n");
    expect(startupError(() => restoreDatabase({ from: file, dataDir, masterKeyFile: malformed }, dataFiles({ dataDir }))).message).toBe(
      `master key ${malformed} is not 32 base64-encoded bytes: pass the key file of the backed-up data dir`,
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it("from a file that is not a Gatehouse backup: refused, nothing written", async () => {
    const source = await bootstrappedDataDir(fresh("source"));
    const garbage = fresh("garbage.db");
    writeFileSync(garbage, randomBytes(8192));
    const dataDir = fresh("from-garbage");
    expect(() => restoreDatabase({ from: garbage, dataDir, masterKeyFile: source.files.masterKey }, dataFiles({ dataDir }))).toThrow(
      `${garbage} is not an intact Gatehouse database`,
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it("a backup from before master-key probes: restored with the key given (the first start seals a probe under it)", async () => {
    const { file } = await backedUp({ probe: false });
    const key = fresh("given.key");
    const keyBytes = randomBytes(32);
    writeFileSync(key, `${keyBytes.toString("base64")}\n`);
    const dataDir = fresh("no-probe");
    restoreDatabase({ from: file, dataDir, masterKeyFile: key }, dataFiles({ dataDir }));
    expect(readFileSync(dataFiles({ dataDir }).masterKey, "utf8")).toBe(`${keyBytes.toString("base64")}\n`);
  });
});
