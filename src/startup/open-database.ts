import { checkDatabasePages, checkDatabasePagesInBackground, databaseFileExists, takeCleanClose } from "../store/sqlite/sqlite-file.js";
import type { Store } from "../store/store.js";
import { StartupError } from "./startup-error.js";

/**
 * SQLite's own error under the wrappers: drizzle wraps a failed migration statement in an error whose
 * message is the whole multi-line SQL, so the reason ("table `events` already exists") and the code
 * are on its cause.
 */
function sqliteReason(error: unknown): { code: string; reason: string } {
  // Stryker disable next-line EqualityOperator: the bound only ends a cause chain that loops; drizzle puts SQLite's own error right under its wrapper
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return { code, reason: firstLine(current) };
  }
  // Stryker disable next-line StringLiteral: no code: any string that is no code the caller checks for gives the same answer
  return { code: "", reason: firstLine(error) };
}

const firstLine = (error: unknown) => String((error as Error)?.message ?? error).split("\n")[0]!.slice(0, 200);

/**
 * Opens the store, turning what SQLite says about a bad file or a failed migration into one line
 * that names the file and what to do (the cause stays attached for the debug log).
 */
export function openDatabase(open: () => Store, databasePath: string, options: { checkLater?: (check: (signal: AbortSignal) => Promise<void>) => void } = {}): Store {
  const existed = databaseFileExists(databasePath);
  try {
    // A damaged page is found now, not later as `internal` on some call or overwritten by a migration. The check reads
    // the whole file (7 s for 5 GB here, before the server could answer). A server (`checkLater`) reads it before it
    // starts only when the last run did not end with a clean close of the file — a crash, a kill, a power cut, a file
    // replaced or changed since (a clean close leaves a marker, taken here) — and otherwise once it answers, beside
    // it. The operator's commands check before they start, always.
    // The marker is taken by every open, so a run that does not end with a clean close leaves none behind.
    const cleanlyClosed = existed && takeCleanClose(databasePath);
    const { checkLater } = options;
    if (cleanlyClosed && checkLater) checkLater((signal) => checkDatabasePagesInBackground(databasePath, signal));
    else if (existed) checkDatabasePages(databasePath);
    return open();
  } catch (error) {
    const { code, reason } = sqliteReason(error);
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new StartupError(`database ${databasePath} is not a database or is corrupted (${code}): restore it from a backup (gatehouse restore)`, { cause: error });
    }
    if (code === "GATEHOUSE_SCHEMA_NEWER") {
      throw new StartupError(`database ${databasePath} was migrated by a newer Gatehouse version (${reason}): run that version or restore a backup`, { cause: error });
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
