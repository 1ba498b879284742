import Database from "better-sqlite3";
import { closeSync, existsSync, fdatasyncSync, fsyncSync, lstatSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";

/**
 * What the operator's commands (start-up checks, backup, restore) need to know of a database FILE,
 * before or without opening it as a store. Each opens its own short-lived connection.
 */

function withFile<T>(path: string, readonly: boolean, work: (db: Database.Database) => T): T {
  const db = new Database(path, { fileMustExist: true, readonly });
  try {
    db.pragma("busy_timeout = 10000");
    return work(db);
  } finally {
    db.close();
  }
}

/** Whether a file exists with content (a database that was at least created). */
export function databaseFileExists(path: string): boolean {
  return existsSync(path) && statSync(path).size > 0;
}

/**
 * Left beside the database file by a clean close: the file as that close left it. Beside the file as SQLite resolves
 * it (symlinks followed), which is where the store that closes it writes it.
 */
const closedCleanlyMarker = (path: string) => `${realpathSync(path)}-closed`;

/** A marker is a few dozen bytes; anything else found under its name is not one. */
const MARKER_MAX_BYTES = 1024;

/** fsync of a file or directory by path. */
function syncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** What the marker compares: `utimes` can set a modification time back, not the change time. */
const fingerprint = ({ ino, size, mtimeMs, ctimeMs }: { ino: number; size: number; mtimeMs: number; ctimeMs: number }) => JSON.stringify({ ino, size, mtimeMs, ctimeMs });

/**
 * Records that the store closed the file cleanly (its last connection closed, the log checkpointed into the file and
 * removed) and that its pages were read in that run: the file's inode, size and times. The file is synced first (with
 * `synchronous=OFF` SQLite's closing checkpoint does not), then the marker is written under another name and renamed
 * over its own (a link there is replaced, never followed), and the directory synced.
 */
export function recordCleanClose(path: string): void {
  syncPath(path);
  const marker = closedCleanlyMarker(path);
  const written = `${marker}.new`;
  rmSync(written, { force: true });
  // "wx": created here, never through a link someone left under that name.
  writeFileSync(written, fingerprint(statSync(path)), { mode: 0o600, flag: "wx" });
  syncPath(written);
  renameSync(written, marker);
  syncPath(dirname(marker));
}

/**
 * Whether the file is as a clean close left it: the marker names its inode, size and times (a restored, copied or
 * edited file has others), and no log is left beside it (a run that crashed before any checkpoint leaves the file as
 * it was, but its log behind). The marker is taken: removed, durably, whatever the answer, so a run that does not end
 * with a clean close (which writes a new one) leaves none. Anything under the marker's name that is not a small
 * regular file counts as no marker and goes too (a directory stays: nothing is removed recursively).
 */
export function takeCleanClose(path: string): boolean {
  if (!existsSync(path)) return false;
  const marker = closedCleanlyMarker(path);
  const found = lstatOrUndefined(marker);
  if (!found) return false;
  const recorded = found.isFile() && found.size <= MARKER_MAX_BYTES ? readFileSync(marker, "utf8") : undefined;
  if (!found.isDirectory()) rmSync(marker, { force: true });
  syncPath(dirname(marker));
  const log = `${path}-wal`;
  if (existsSync(log) && statSync(log).size > 0) return false;
  return recorded === fingerprint(statSync(path));
}

const lstatOrUndefined = (path: string) => {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
};

/**
 * Reads every page once (quick_check): SQLite otherwise reads a page only when a query needs it, so a
 * damaged page would surface later as `internal` on some call. Throws with code SQLITE_CORRUPT.
 */
export function checkDatabasePages(path: string): void {
  withFile(path, false, (db) => {
    const result = db.pragma("quick_check(1)", { simple: true });
    if (result !== "ok") throw damaged(String(result));
  });
}

const damaged = (found: string) => Object.assign(new Error(`quick_check: ${found}`), { code: "SQLITE_CORRUPT" });

/**
 * checkDatabasePages on a worker thread with a read-only connection of its own, beside a server that already answers:
 * rejects as it throws (code SQLITE_CORRUPT), or with the error that kept it from reading the file. `signal` ends it
 * (the server stops): the thread is ended and the promise rejects with the signal's reason.
 */
export function checkDatabasePagesInBackground(path: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./page-check-worker.mjs", import.meta.url), { workerData: { path } });
    // It must not keep a stopping process alive.
    worker.unref();
    signal.addEventListener("abort", () => {
      reject(signal.reason);
      void worker.terminate();
    }, { once: true });
    worker.once("message", ({ result }: { result: string }) => (result === "ok" ? resolve() : reject(damaged(result))));
    worker.once("error", (error: unknown) => {
      // An error thrown on a worker thread arrives as a plain object (a SQLite error: its code, and no message).
      const { message, code } = error as { message?: unknown; code?: unknown };
      reject(Object.assign(new Error(`the pages could not be read: ${String(message ?? code)}`), { code }));
    });
  });
}

function hasRow(db: Database.Database, table: string): boolean {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
  return exists && db.prepare(`SELECT 1 FROM "${table}" LIMIT 1`).get() !== undefined;
}

/** The master-key probe value of a database file, if it has one. */
export function readMasterKeyProbe(path: string): string | undefined {
  return withFile(path, true, (db) =>
    // Stryker disable next-line OptionalChaining: the probe table holds at most the one row Gatehouse writes, id 1 (sqlite-store.ts)
    hasRow(db, "master_key_probe") ? (db.prepare("SELECT sealed FROM master_key_probe WHERE id = 1").get() as { sealed: string } | undefined)?.sealed : undefined,
  );
}

/**
 * Whether a database file may hold data sealed under a master key: a probe value or a bootstrapped
 * instance. One `gatehouse migrate` created holds neither. A file that cannot be read counts as
 * holding data (never a new key for it).
 */
export function mayHoldSealedData(path: string): boolean {
  if (!databaseFileExists(path)) return false;
  try {
    return withFile(path, false, (db) => hasRow(db, "master_key_probe") || hasRow(db, "instances"));
  } catch {
    return true;
  }
}

/**
 * A consistent copy into `to` (which must not exist): `VACUUM INTO` copies one read snapshot — WAL
 * readers do not block the writer, and unlike the page-stepping backup API it never restarts under
 * constant writes.
 */
export function copyDatabaseSnapshot(path: string, to: string): void {
  withFile(path, false, (db) => {
    db.prepare("VACUUM INTO ?").run(to);
    // The copy holds every commit, also those a running server has not synced yet (group commit): sync the log
    // now, so that after a power loss a backup is never ahead of the database it was taken from.
    const main = (db.pragma("database_list") as { name: string; file: string }[]).find((entry) => entry.name === "main");
    const wal = `${main?.file ?? path}-wal`;
    if (existsSync(wal)) {
      const fd = openSync(wal, "r+");
      try {
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
  });
}

export interface DatabaseSummary {
  events: number;
  lastSequence: number;
}

/** Checks that a file is an intact, bootstrapped Gatehouse database and says what it holds; throws otherwise. */
export function summarizeDatabase(path: string): DatabaseSummary {
  return withFile(path, true, (db) => {
    const check = db.pragma("integrity_check", { simple: true });
    if (check !== "ok") throw new Error(`integrity check: ${String(check)}`);
    if (!hasRow(db, "instances")) throw new Error("it holds no bootstrapped instance");
    return db.prepare("SELECT count(*) AS events, coalesce(max(sequence), 0) AS lastSequence FROM events").get() as DatabaseSummary;
  });
}
