import { answerUnavailableOnConnectionFailure } from "../store/postgres/pg-reads-unavailable.js";
import { createPostgresStore } from "../store/postgres/pg-store.js";
import type { Store } from "../store/store.js";
import { StartupError } from "./startup-error.js";

/** The server's or the system's error under drizzle's wrapper, with its code. */
function codeAndReason(error: unknown): { code: string; reason: string } {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return { code, reason: String((current as Error).message).split("\n")[0]!.slice(0, 200) };
  }
  return { code: "", reason: String((error as Error)?.message ?? error).split("\n")[0]!.slice(0, 200) };
}

/**
 * Opens the PostgreSQL store (applying pending migrations under the advisory lock), turning what goes wrong into one
 * line that names the database (without its password) and what to do. Once open, a database that goes away answers
 * each call `unavailable` (reason `store.unavailable`) until it is back; the pools reconnect by themselves.
 */
export async function openPostgresDatabase(database: { url: string; display: string }): Promise<Store> {
  try {
    return answerUnavailableOnConnectionFailure(await createPostgresStore({ url: database.url }));
  } catch (error) {
    const { code, reason } = codeAndReason(error);
    const name = `database ${database.display}`;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EHOSTUNREACH" || code === "ETIMEDOUT" || /timeout/i.test(reason)) {
      throw new StartupError(`${name} cannot be reached (${code || reason}): check the host and port, and that PostgreSQL runs`, { cause: error });
    }
    if (code === "28P01" || code === "28000") throw new StartupError(`${name} refused the login (${code}): check the user and password`, { cause: error });
    if (code === "3D000") throw new StartupError(`${name} does not exist (${code}): create it (createdb) or fix --database-url`, { cause: error });
    if (code === "GATEHOUSE_SCHEMA_NEWER") {
      throw new StartupError(`${name} was migrated by a newer Gatehouse version (${reason}): run that version or restore a backup`, { cause: error });
    }
    throw new StartupError(`${name} could not be opened or migrated (${code ? `${code}: ` : ""}${reason})`, { cause: error });
  }
}
