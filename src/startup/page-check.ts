import type { Logger } from "../support/logger.js";

/** SQLite's word that the file is damaged or no database (quick_check's verdict carries the same code). */
export const isDamage = (error: unknown) => ["SQLITE_CORRUPT", "SQLITE_NOTADB"].includes(String((error as { code?: unknown } | undefined)?.code));

/**
 * Runs the page check openDatabase handed over (a file a clean close vouched for: read beside the running server)
 * and says what it found: intact (`onChecked`: this run may vouch for the file at its clean close), damaged (a fatal
 * line, then `onDamaged`), or no verdict (the thread did not start, the file stayed locked: an error line, and the
 * next start reads the pages first). Returns what ends it: a check cut short by the stop says nothing about the file.
 */
export function runPageCheck(
  check: ((signal: AbortSignal) => Promise<void>) | undefined,
  options: { logger: Logger; database: string; onChecked: () => void; onDamaged: () => void },
): AbortController {
  const { logger, database } = options;
  const stop = new AbortController();
  check?.(stop.signal).then(
    () => {
      options.onChecked();
      logger.info({ database }, "database pages checked: intact");
    },
    (error: unknown) => {
      if (stop.signal.aborted) return;
      if (!isDamage(error)) {
        logger.error({ err: error, database }, "the database pages could not be checked beside the server; the next start checks them first");
        return;
      }
      logger.fatal({ err: error, database }, "the database is damaged: stopping; restore it from a backup (gatehouse restore)");
      options.onDamaged();
    },
  );
  return stop;
}
