import Database from "better-sqlite3";
import { chmodSync, existsSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { StartupError } from "../startup/startup-error.js";

export interface BackupSummary {
  file: string;
  events: number;
  lastSequence: number;
}

/**
 * A consistent copy of the database, taken while the server may be serving and writing: `VACUUM INTO`
 * copies one read snapshot (WAL readers do not block the writer, and unlike the page-stepping backup
 * API it never restarts under constant writes). The master key is deliberately NOT in the copy: a
 * stolen backup alone opens no sealed secret; the operator keeps the key separately.
 */
export function backupDatabase(databasePath: string, to: string): BackupSummary {
  const target = resolve(to);
  if (!existsSync(databasePath)) throw new StartupError(`no database at ${databasePath}: check --data-dir`);
  if (existsSync(target)) throw new StartupError(`${target} exists already: choose a new file (a backup never overwrites)`);
  const partial = join(dirname(target), `.${process.pid}.gatehouse-backup.partial`);
  const source = new Database(databasePath, { fileMustExist: true });
  try {
    source.pragma("busy_timeout = 10000");
    source.prepare("VACUUM INTO ?").run(partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new StartupError(`backup of ${databasePath} failed: ${(error as Error).message}`, { cause: error });
  } finally {
    source.close();
  }
  chmodSync(partial, 0o600);
  const summary = describeBackup(partial);
  renameSync(partial, target);
  return { ...summary, file: target };
}

/** Checks that a file is an intact Gatehouse database and says what it holds. */
export function describeBackup(file: string): Omit<BackupSummary, "file"> {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const check = db.pragma("integrity_check", { simple: true });
    if (check !== "ok") throw new Error(`integrity check: ${String(check)}`);
    const row = db.prepare("SELECT count(*) AS events, coalesce(max(sequence), 0) AS lastSequence FROM events").get() as { events: number; lastSequence: number };
    const instance = db.prepare("SELECT count(*) AS n FROM instances").get() as { n: number };
    if (instance.n !== 1) throw new Error("it holds no bootstrapped instance");
    return row;
  } catch (error) {
    throw new StartupError(`${file} is not an intact Gatehouse database (${(error as Error).message})`, { cause: error });
  } finally {
    db?.close();
  }
}
