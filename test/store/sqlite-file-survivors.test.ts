import Database from "better-sqlite3";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqlite } from "../../src/store/sqlite/db.js";
import { checkDatabasePages, copyDatabaseSnapshot, mayHoldSealedData, readMasterKeyProbe, summarizeDatabase } from "../../src/store/sqlite/sqlite-file.js";

// What the operator's commands (start-up checks, backup, restore) do to a database FILE (src/store/sqlite-file.ts):
// they never create the file they are pointed at, never write to a file they only read (a backup stays exactly as
// it was taken), and each closes its short-lived connection, so a database no server has open is left closed, as it
// was found: nothing (no -wal or -shm file) is left beside it.

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-file-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A bootstrapped Gatehouse database (WAL mode, as the server leaves it), closed. */
function bootstrapped(name = "db.sqlite"): string {
  const path = join(dir, name);
  const { sqlite } = openSqlite({ path, synchronous: "NORMAL", busyTimeoutMs: 1000 });
  sqlite.prepare("INSERT INTO instances (id, name, default_org_id) VALUES ('i1', 'I', 'o1')").run();
  sqlite.prepare("INSERT INTO master_key_probe (id, sealed) VALUES (1, 'v1.probe')").run();
  sqlite.close();
  return path;
}

/**
 * A copy of a database as a server left it when it was killed: the main file plus a -wal that still holds
 * committed changes (one more event) no checkpoint has copied into the main file.
 */
function copyWithPendingWal(): string {
  const live = bootstrapped("live.sqlite");
  const writer = new Database(live);
  writer.pragma("wal_autocheckpoint = 0");
  writer
    .prepare("INSERT INTO events (instance_id, aggregate_type, aggregate_id, aggregate_version, type, payload, actor, resource_owner, created_at) VALUES ('i1', 'instance', 'i1', 1, 'instance.added', '{}', 'a', 'i1', 0)")
    .run();
  const copy = join(dir, "copy.sqlite");
  copyFileSync(live, copy);
  copyFileSync(`${live}-wal`, `${copy}-wal`);
  writer.close();
  return copy;
}

const besideIt = (path: string) => [`${path}-wal`, `${path}-shm`].filter((file) => existsSync(file));

describe("a file that does not exist", () => {
  it("is an error for every reader and check, and none of them creates it", () => {
    const missing = join(dir, "missing.sqlite");
    expect(() => checkDatabasePages(missing)).toThrow();
    expect(() => readMasterKeyProbe(missing)).toThrow();
    expect(() => summarizeDatabase(missing)).toThrow();
    expect(() => copyDatabaseSnapshot(missing, join(dir, "copy.sqlite"))).toThrow();
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(dir, "copy.sqlite"))).toBe(false);
  });
});

describe("a database no server has open is left closed, as it was found", () => {
  it("after the start-up page check", () => {
    const path = bootstrapped();
    checkDatabasePages(path);
    expect(besideIt(path)).toEqual([]);
  });

  it("after the start-up question whether it may hold sealed data", () => {
    const path = bootstrapped();
    expect(mayHoldSealedData(path)).toBe(true);
    expect(besideIt(path)).toEqual([]);
  });

  it("after a backup is taken of it", () => {
    const path = bootstrapped();
    copyDatabaseSnapshot(path, join(dir, "backup.sqlite"));
    expect(besideIt(path)).toEqual([]);
    expect(summarizeDatabase(join(dir, "backup.sqlite"))).toEqual({ events: 0, lastSequence: 0 });
  });
});

describe("reading a file never writes to it", () => {
  it("the master-key probe of a restore's source is read with the file left byte for byte as it was", () => {
    const copy = copyWithPendingWal();
    const before = readFileSync(copy);
    expect(readMasterKeyProbe(copy)).toBe("v1.probe");
    expect(readFileSync(copy).equals(before)).toBe(true);
    expect(existsSync(`${copy}-wal`)).toBe(true);
  });

  it("describing a file (backup check, restore) counts what it holds, its -wal included, and leaves it as it was", () => {
    const copy = copyWithPendingWal();
    const before = readFileSync(copy);
    expect(summarizeDatabase(copy)).toEqual({ events: 1, lastSequence: 1 });
    expect(readFileSync(copy).equals(before)).toBe(true);
    expect(existsSync(`${copy}-wal`)).toBe(true);
  });
});
