import Database from "better-sqlite3";
import { withStatementCache } from "./statement-cache.js";
import { type BetterSQLite3Database, drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { closeSync, fdatasync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { refuseNewerSchema } from "../newer-schema.js";
import * as schema from "./schema/index.js";

export type Synchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";

export interface SqliteOptions {
  path: string;
  /**
   * FULL (default) syncs the WAL on every commit: an acknowledged write survives power loss.
   * NORMAL is faster and survives a process crash, but may lose the last commits on power loss.
   */
  synchronous: Synchronous;
  busyTimeoutMs: number;
  /** Told how many commits each sync of the log made durable (group commit), for the metrics. */
  onSync?: (commits: number) => void;
  /** Told once when a sync of the log failed: the store refuses every commit from then on; the process must stop. */
  onSyncFailure?: (error: unknown) => void;
  /**
   * Told once when a batch of commits was lost (SQLite rolled it back: a full or failing disk): the store refuses every
   * commit and every answer from then on; the process must stop (commit-batches.ts).
   */
  onBatchLost?: (error: unknown) => void;
  /** Wraps the sync of the log (default: fdatasync of the WAL); tests hold or fail it to watch what waits for it. */
  syncLog?: (sync: () => Promise<void>) => Promise<void>;
  /**
   * Whether every page of the file was read in this run (open-database.ts): a clean close records it for the next
   * start only then. Default: yes (whoever opens the store checked the file first).
   */
  pagesChecked?: () => boolean;
}

/** Whether commits wait for a sync of the log (FULL, EXTRA), which the store then does itself (group commit). */
export function syncsLog(synchronous: Synchronous): boolean {
  return synchronous === "FULL" || synchronous === "EXTRA";
}

/**
 * fdatasync of the database's WAL file on the thread pool. The file is opened at once, by the path SQLite itself
 * uses (the main file as SQLite resolved it, symlinks included, plus `-wal`): while the connection is open SQLite
 * never replaces it (only the last close removes it), so one descriptor serves every sync.
 */
export function openLogSync(sqlite: Database.Database): { sync: () => Promise<void>; close: () => void } {
  const fd = openSync(`${databaseFile(sqlite)}-wal`, "r+");
  let closed = false;
  return {
    sync: () => new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve()))),
    // Once: a store may be closed twice (an error path and the stop).
    close: () => {
      if (!closed) closeSync(fd);
      closed = true;
    },
  };
}

/** The main database's file as SQLite resolved it (symlinks included): what the log sync and the close marker name. */
export function databaseFile(sqlite: Database.Database): string {
  const main = (sqlite.pragma("database_list") as { name: string; file: string }[]).find((db) => db.name === "main");
  // Stryker disable next-line ConditionalExpression,OptionalChaining: every connection has its main database
  if (!main?.file) throw new Error("the database has no file");
  return main.file;
}

export type GatehouseDb = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

/** Opens (creating if needed) the SQLite file, sets its pragmas and applies pending migrations. */
export function openSqlite(options: SqliteOptions): { sqlite: Database.Database; db: GatehouseDb } {
  mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  // The database holds hashes and encrypted secrets: create it readable by its owner only
  // (SQLite gives the -wal and -shm files the same mode).
  closeSync(openSync(options.path, "a", 0o600));
  const sqlite = new Database(options.path);
  // Durability (group commit, the log the store syncs) and readers beside the writer rely on the WAL.
  if (sqlite.pragma("journal_mode = WAL", { simple: true }) !== "wal") {
    sqlite.close();
    throw new Error(`SQLite cannot keep a write-ahead log for ${options.path} (a file system without shared memory?)`);
  }
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`);
  // FULL and EXTRA sync the log at every commit while holding the event loop; instead, commits are written unsynced
  // (NORMAL) and the store syncs the log itself before acknowledging them, one sync for many (group commit).
  sqlite.pragma(`synchronous = ${syncsLog(options.synchronous) ? "NORMAL" : options.synchronous}`);
  const db = drizzle({ client: withStatementCache(sqlite), schema });
  refuseNewerSqliteSchema(sqlite);
  migrate(db, { migrationsFolder });
  // Each command of a write batch runs in a savepoint (commit-batches.ts), whose journal SQLite keeps in memory only up
  // to 64 KiB and then moves to a temporary file: a new user and its event touch about a dozen pages, often more, so
  // a third of the batches created, wrote and deleted a file (CreateHumanUser: about 6 µs of SQLite per user). Set
  // after the migrations, whose index builds may sort whole tables.
  sqlite.pragma("temp_store = MEMORY");
  return { sqlite, db };
}

/**
 * Refuses a database that a newer Gatehouse migrated (newer-schema.ts), reading the newest migration it records.
 */
function refuseNewerSqliteSchema(sqlite: Database.Database): void {
  const recorded = sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'").get();
  if (recorded === undefined) return;
  const { newest } = sqlite.prepare("SELECT max(created_at) AS newest FROM __drizzle_migrations").get() as { newest: number | string | null };
  refuseNewerSchema(newest, migrationsFolder);
}
