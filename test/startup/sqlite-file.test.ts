import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dataFiles } from "../../src/config.js";
import { checkMasterKey } from "../../src/startup/master-key.js";
import {
  checkDatabasePages,
  copyDatabaseSnapshot,
  databaseFileExists,
  mayHoldSealedData,
  readMasterKeyProbe,
  summarizeDatabase,
} from "../../src/store/sqlite/sqlite-file.js";
import { bootstrappedDataDir, damagePages, openStore, useTempRoot } from "./data-dir.js";

// What the operator's commands learn from a database FILE without opening it as a store: whether it
// exists, whether its pages are intact, whether it may hold sealed data, a snapshot copy and a summary.
const root = useTempRoot("sqlite-file");
let dirs = 0;
const newDataDir = () => {
  const dataDir = join(root(), `d${++dirs}`);
  mkdirSync(dataDir);
  return { dataDir, ...dataFiles({ dataDir }) };
};

/** A database `gatehouse migrate` leaves: every table, no row. */
async function migratedOnly() {
  const dir = newDataDir();
  await openStore(dir.dataDir).close();
  return dir;
}

/** A plain SQLite file that is no Gatehouse database. */
function foreignDatabase() {
  const { database } = newDataDir();
  const db = new Database(database);
  db.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('hello')");
  db.close();
  return database;
}

const count = (database: string, sql: string) => {
  const db = new Database(database, { readonly: true });
  try {
    return db.prepare(sql).pluck().get();
  } finally {
    db.close();
  }
};

describe("databaseFileExists", () => {
  it("only a file with content counts (a missing or empty file is a new database)", () => {
    const { database } = newDataDir();
    expect(databaseFileExists(database)).toBe(false);
    writeFileSync(database, "");
    expect(databaseFileExists(database)).toBe(false);
    writeFileSync(database, "x");
    expect(databaseFileExists(database)).toBe(true);
  });
});

describe("checkDatabasePages", () => {
  it("passes an intact database; damaged pages fail with SQLITE_CORRUPT and what quick_check found", async () => {
    const { files } = await bootstrappedDataDir(newDataDir().dataDir);
    expect(() => checkDatabasePages(files.database)).not.toThrow();
    damagePages(files.database);
    expect(() => checkDatabasePages(files.database)).toThrow(expect.objectContaining({ code: "SQLITE_CORRUPT", message: expect.stringMatching(/^quick_check: .+/) }));
  });
});

describe("readMasterKeyProbe and mayHoldSealedData", () => {
  it("a missing file holds nothing", () => {
    expect(mayHoldSealedData(join(root(), "none.db"))).toBe(false);
  });

  it("a migrated database without rows, or a foreign SQLite file: no probe, nothing sealed", async () => {
    const { database } = await migratedOnly();
    expect([readMasterKeyProbe(database), mayHoldSealedData(database)]).toEqual([undefined, false]);
    const foreign = foreignDatabase();
    expect([readMasterKeyProbe(foreign), mayHoldSealedData(foreign)]).toEqual([undefined, false]);
  });

  it("a probe value alone: read back as the store sealed it, and it may hold sealed data", async () => {
    const { dataDir, database, masterKey } = await migratedOnly();
    const store = openStore(dataDir);
    await checkMasterKey(store, randomBytes(32), masterKey);
    const sealed = await store.getMasterKeyProbe();
    await store.close();
    expect(readMasterKeyProbe(database)).toBe(sealed);
    expect(mayHoldSealedData(database)).toBe(true);
  });

  it("a bootstrapped instance without a probe (older databases) may hold sealed data too", async () => {
    const { files } = await bootstrappedDataDir(newDataDir().dataDir, { probe: false });
    expect([readMasterKeyProbe(files.database), mayHoldSealedData(files.database)]).toEqual([undefined, true]);
  });

  it("a file that cannot be read as a database counts as holding data", () => {
    const { database } = newDataDir();
    writeFileSync(database, randomBytes(8192));
    expect(mayHoldSealedData(database)).toBe(true);
  });
});

describe("copyDatabaseSnapshot", () => {
  it("copies the committed state while another connection holds an open write transaction, without waiting for it", async () => {
    const { files } = await bootstrappedDataDir(newDataDir().dataDir);
    const events = count(files.database, "SELECT count(*) FROM events");
    const writer = new Database(files.database);
    try {
      writer.exec("BEGIN IMMEDIATE");
      writer.exec("DELETE FROM personal_access_tokens");
      const copy = join(root(), `snapshot-${dirs}.db`);
      copyDatabaseSnapshot(files.database, copy);
      writer.exec("COMMIT");
      expect(count(copy, "SELECT count(*) FROM events")).toBe(events);
      expect(count(copy, "SELECT count(*) FROM personal_access_tokens")).toBe(1);
    } finally {
      writer.close();
    }
  });

  it("never writes over an existing file", async () => {
    const { files } = await bootstrappedDataDir(newDataDir().dataDir);
    const target = join(root(), "taken.db");
    writeFileSync(target, "keep me");
    expect(() => copyDatabaseSnapshot(files.database, target)).toThrow();
    expect(count(files.database, "SELECT count(*) FROM instances")).toBe(1);
  });
});

describe("summarizeDatabase", () => {
  it("counts the events and the last sequence of a bootstrapped database", async () => {
    const { files } = await bootstrappedDataDir(newDataDir().dataDir);
    const events = count(files.database, "SELECT count(*) FROM events") as number;
    expect(events).toBeGreaterThan(1);
    expect(summarizeDatabase(files.database)).toEqual({ events, lastSequence: count(files.database, "SELECT max(sequence) FROM events") });
  });

  it("refuses a database without a bootstrapped instance (migrated only, or foreign)", async () => {
    const { database } = await migratedOnly();
    expect(() => summarizeDatabase(database)).toThrow("it holds no bootstrapped instance");
    expect(() => summarizeDatabase(foreignDatabase())).toThrow("it holds no bootstrapped instance");
  });

  it("refuses a damaged database with what the integrity check found", async () => {
    const { files } = await bootstrappedDataDir(newDataDir().dataDir);
    damagePages(files.database);
    expect(() => summarizeDatabase(files.database)).toThrow(/^integrity check: .+/);
  });
});
