import { existsSync } from "node:fs";
import type { Store } from "../store/store.js";
import { StartupError } from "./startup-error.js";

/**
 * Opens the store, turning what SQLite says about a bad file or a failed migration into one line
 * that names the file and what to do (the cause stays attached for the debug log).
 */
export function openDatabase(open: () => Store, databasePath: string): Store {
  const existed = existsSync(databasePath);
  try {
    return open();
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new StartupError(`database ${databasePath} is not a database or is corrupted (${code}): restore it from a backup (gatehouse restore)`, { cause: error });
    }
    if (code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY" || code === "EACCES" || code === "EPERM") {
      throw new StartupError(`database ${databasePath} cannot be opened for writing (${code}): check the data dir's owner and mode`, { cause: error });
    }
    if (existed) {
      throw new StartupError(`database ${databasePath} could not be migrated (${(error as Error).message.split("\n")[0]?.slice(0, 200)}): restore a backup or run the matching Gatehouse version`, { cause: error });
    }
    throw new StartupError(`database ${databasePath} could not be created (${(error as Error).message.split("\n")[0]?.slice(0, 200)})`, { cause: error });
  }
}
