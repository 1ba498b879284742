import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dataFiles } from "../../src/config.js";
import { openDatabase } from "../../src/startup/open-database.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { repoRoot } from "../support/command.js";
import { bootstrappedDataDir, damagePages, openStore, useTempRoot } from "./data-dir.js";
import { thrownBy } from "../support/thrown.js";

// openDatabase turns what SQLite (or the file system) says about the database file into ONE line naming
// the file and what to do; these are the lines `gatehouse serve` prints (test/cli/data-dir-safety.test.ts).
const root = useTempRoot("open-db");
let dirs = 0;
const newDataDir = () => join(root(), `d${++dirs}`);
const migrationCount = (JSON.parse(readFileSync(join(repoRoot, "src/store/sqlite/migrations/meta/_journal.json"), "utf8")) as { entries: unknown[] }).entries.length;

/** The real store opener, counting its calls: a damaged file must be refused before it runs. */
function countingOpener(path: string) {
  const opener = {
    calls: 0,
    open: (): Store => {
      opener.calls++;
      return createSqliteStore({ path, synchronous: "NORMAL", busyTimeoutMs: 1_000 });
    },
  };
  return opener;
}

/** The StartupError `work` throws (failing the test if it returns or throws anything else). */
const startupError = (work: () => unknown): StartupError => thrownBy(StartupError, work);

describe("openDatabase on a usable file", () => {
  it("a new data dir: creates the database and applies every migration (nothing bootstrapped yet)", async () => {
    const { database } = dataFiles({ dataDir: newDataDir() });
    const store = openDatabase(() => createSqliteStore({ path: database, synchronous: "NORMAL", busyTimeoutMs: 1_000 }), database);
    expect(await store.getInstance()).toBeUndefined();
    await store.close();
    const db = new Database(database, { readonly: true });
    expect(db.prepare("SELECT count(*) FROM __drizzle_migrations").pluck().get()).toBe(migrationCount);
    db.close();
  });

  it("an existing database keeps its data; an empty file (size 0) counts as new and is created in place", async () => {
    const existing = await bootstrappedDataDir(newDataDir());
    const reopened = openStore(existing.dataDir);
    expect((await reopened.getInstance())?.name).toBe("Gatehouse");
    await reopened.close();

    const dataDir = newDataDir();
    mkdirSync(dataDir);
    writeFileSync(dataFiles({ dataDir }).database, "");
    const created = openStore(dataDir);
    expect(await created.getInstance()).toBeUndefined();
    await created.close();
    expect(statSync(dataFiles({ dataDir }).database).size).toBeGreaterThan(0);
  });
});

describe("openDatabase on a file it cannot use", () => {
  it("random bytes: not a database (SQLITE_NOTADB), restore from a backup — refused before the store opens it", () => {
    const dataDir = newDataDir();
    mkdirSync(dataDir);
    const { database } = dataFiles({ dataDir });
    writeFileSync(database, randomBytes(64 * 1024));
    const opener = countingOpener(database);
    const error = startupError(() => openDatabase(opener.open, database));
    expect(error.message).toBe(`database ${database} is not a database or is corrupted (SQLITE_NOTADB): restore it from a backup (gatehouse restore)`);
    expect(opener.calls).toBe(0);
  });

  it("a real database with damaged pages: corrupted (SQLITE_CORRUPT), found by reading every page before any migration runs", async () => {
    const { database } = (await bootstrappedDataDir(newDataDir())).files;
    damagePages(database);
    const opener = countingOpener(database);
    const error = startupError(() => openDatabase(opener.open, database));
    expect(error.message).toBe(`database ${database} is not a database or is corrupted (SQLITE_CORRUPT): restore it from a backup (gatehouse restore)`);
    expect(opener.calls).toBe(0);
    expect(error.cause).toBeDefined();
  });

  it("a migration that fails on an existing file: SQLite's reason (first line only, from under drizzle's wrapper), restore or run the matching version", () => {
    const dataDir = newDataDir();
    mkdirSync(dataDir);
    const { database } = dataFiles({ dataDir });
    const db = new Database(database);
    db.exec("CREATE TABLE events (id TEXT, something_else TEXT)");
    db.close();
    const error = startupError(() => openStore(dataDir));
    expect(error.message).toBe(`database ${database} could not be migrated (table \`events\` already exists): restore a backup or run the matching Gatehouse version`);
  });

  it("a database a newer Gatehouse migrated: refused (this version would skip every migration and run on an unknown schema), data untouched", async () => {
    const existing = await bootstrappedDataDir(newDataDir());
    const { database } = dataFiles({ dataDir: existing.dataDir });
    const newest = Math.max(...(JSON.parse(readFileSync(join(repoRoot, "src/store/sqlite/migrations/meta/_journal.json"), "utf8")) as { entries: { when: number }[] }).entries.map((e) => e.when));
    const db = new Database(database);
    db.prepare("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-a-newer-version', ?)").run(newest + 1);
    const before = db.prepare("SELECT count(*) FROM users").pluck().get();
    db.close();
    const error = startupError(() => openStore(existing.dataDir));
    expect(error.message).toMatch(new RegExp(`^database ${database} was migrated by a newer Gatehouse version \\(.+\\): run that version or restore a backup$`));
    const after = new Database(database, { readonly: true });
    expect(after.prepare("SELECT count(*) FROM users").pluck().get()).toBe(before);
    after.close();
    // The newest migration this version knows is not "newer": the same database without that row opens.
    const undo = new Database(database);
    undo.prepare("DELETE FROM __drizzle_migrations WHERE hash = 'from-a-newer-version'").run();
    undo.prepare("UPDATE __drizzle_migrations SET created_at = ? WHERE created_at = (SELECT max(created_at) FROM __drizzle_migrations)").run(newest);
    undo.close();
    const reopened = openStore(existing.dataDir);
    expect((await reopened.getInstance())?.name).toBe("Gatehouse");
    await reopened.close();
  });

  it("a database path that is a directory: cannot be opened for writing (SQLITE_CANTOPEN), check owner and mode", () => {
    const dataDir = newDataDir();
    const { database } = dataFiles({ dataDir });
    mkdirSync(database, { recursive: true });
    const error = startupError(() => openStore(dataDir));
    expect(error.message).toBe(`database ${database} cannot be opened for writing (SQLITE_CANTOPEN): check the data dir's owner and mode`);
  });

  it("a new database that cannot be created (its dir is a regular file): says so with the system's reason", () => {
    const file = join(root(), "a-regular-file");
    writeFileSync(file, "not a dir\n");
    const database = join(file, "gatehouse.db");
    const error = startupError(() => openDatabase(countingOpener(database).open, database));
    expect(error.message).toBe(`database ${database} could not be created (EEXIST: file already exists, mkdir '${file}')`);
  });

  // The tests run as root, which the kernel lets open any file: these errors are the ones SQLite and Node
  // give a non-root server (read-only file, no permission), thrown by the opener as they would be.
  it.each([
    ["SQLITE_READONLY", () => new Database.SqliteError("attempt to write a readonly database", "SQLITE_READONLY")],
    ["EACCES", () => Object.assign(new Error("EACCES: permission denied, open 'gatehouse.db'"), { code: "EACCES", syscall: "open" })],
    ["EPERM", () => Object.assign(new Error("EPERM: operation not permitted, open 'gatehouse.db'"), { code: "EPERM", syscall: "open" })],
  ])("%s from the opener: cannot be opened for writing, check owner and mode", (code, makeError) => {
    const database = join(newDataDir(), "gatehouse.db");
    const error = startupError(() =>
      openDatabase(() => {
        throw makeError();
      }, database),
    );
    expect(error.message).toBe(`database ${database} cannot be opened for writing (${code}): check the data dir's owner and mode`);
  });

  it("an error without a code: its first line, at most 200 characters; a cause chain that loops does not hang the start", () => {
    const database = join(newDataDir(), "gatehouse.db");
    const long = `${"x".repeat(250)}\nsecond line`;
    const looping = new Error(long);
    (looping as { cause?: unknown }).cause = looping;
    const error = startupError(() =>
      openDatabase(() => {
        throw looping;
      }, database),
    );
    expect(error.message).toBe(`database ${database} could not be created (${"x".repeat(200)})`);
    expect(error.cause).toBe(looping);
  });
});
