import Database from "better-sqlite3";
import { existsSync, statSync } from "node:fs";
import type { Store } from "../store/store.js";
import { StartupError } from "./startup-error.js";

/**
 * SQLite's own error under the wrappers: drizzle wraps a failed migration statement in an error whose
 * message is the whole multi-line SQL, so the reason ("table `events` already exists") and the code
 * are on its cause.
 */
function sqliteReason(error: unknown): { code: string; reason: string } {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return { code, reason: firstLine(current) };
  }
  return { code: "", reason: firstLine(error) };
}

const firstLine = (error: unknown) => String((error as Error)?.message ?? error).split("\n")[0]?.slice(0, 200) ?? "";

/**
 * A page-level check of an existing file before it is migrated and served: SQLite reads a page only
 * when a query needs it, so a damaged page would otherwise surface later as `internal` on some call
 * (or be written over by a migration). quick_check reads every page once: milliseconds for a
 * database of a few MB, seconds for GBs.
 */
function checkPages(databasePath: string): void {
  const db = new Database(databasePath, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 10000");
    const result = db.pragma("quick_check(1)", { simple: true });
    if (result !== "ok") throw Object.assign(new Error(`quick_check: ${String(result)}`), { code: "SQLITE_CORRUPT" });
  } finally {
    db.close();
  }
}

/**
 * Opens the store, turning what SQLite says about a bad file or a failed migration into one line
 * that names the file and what to do (the cause stays attached for the debug log).
 */
export function openDatabase(open: () => Store, databasePath: string): Store {
  const existed = existsSync(databasePath) && statSync(databasePath).size > 0;
  try {
    if (existed) checkPages(databasePath);
    return open();
  } catch (error) {
    const { code, reason } = sqliteReason(error);
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new StartupError(`database ${databasePath} is not a database or is corrupted (${code}): restore it from a backup (gatehouse restore)`, { cause: error });
    }
    if (code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY" || code === "EACCES" || code === "EPERM") {
      throw new StartupError(`database ${databasePath} cannot be opened for writing (${code}): check the data dir's owner and mode`, { cause: error });
    }
    if (existed) {
      throw new StartupError(`database ${databasePath} could not be migrated (${reason}): restore a backup or run the matching Gatehouse version`, { cause: error });
    }
    throw new StartupError(`database ${databasePath} could not be created (${reason})`, { cause: error });
  }
}
