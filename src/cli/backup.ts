import { chmodSync, existsSync, renameSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { StartupError } from "../startup/startup-error.js";
import { copyDatabaseSnapshot, summarizeDatabase } from "../store/sqlite/sqlite-file.js";

export interface BackupSummary {
  file: string;
  events: number;
  lastSequence: number;
}

/**
 * A consistent copy of the database, taken while the server may be serving and writing (one read
 * snapshot, see copyDatabaseSnapshot), written beside the target and renamed into place once checked.
 * The master key is deliberately NOT in the copy: a
 * stolen backup alone opens no sealed secret; the operator keeps the key separately.
 */
export function backupDatabase(databasePath: string, to: string): BackupSummary {
  const target = resolve(to);
  if (!existsSync(databasePath)) throw new StartupError(`no database at ${databasePath}: check --data-dir`);
  if (existsSync(target)) throw new StartupError(`${target} exists already: choose a new file (a backup never overwrites)`);
  const partial = join(dirname(target), `.${process.pid}.gatehouse-backup.partial`);
  try {
    copyDatabaseSnapshot(databasePath, partial);
  } catch (error) {
    rmSync(partial, { force: true });
    throw new StartupError(`backup of ${databasePath} failed: ${(error as Error).message}`, { cause: error });
  }
  chmodSync(partial, 0o600);
  const summary = describeBackup(partial);
  renameSync(partial, target);
  return { ...summary, file: target };
}

/** Checks that a file is an intact Gatehouse database and says what it holds. */
export function describeBackup(file: string): Omit<BackupSummary, "file"> {
  try {
    return summarizeDatabase(file);
  } catch (error) {
    throw new StartupError(`${file} is not an intact Gatehouse database (${(error as Error).message})`, { cause: error });
  }
}
