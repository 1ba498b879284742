import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { refuseNewerSchema } from "../newer-schema.js";
import * as schema from "./schema/index.js";

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq's URL form; `?sslmode=…` and the like as pg reads them). */
  url: string;
  /** Connections this process keeps at most (reads run on the pool beside the commits). Default 10. */
  poolSize?: number;
}

export type PostgresDb = NodePgDatabase<typeof schema>;

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

/**
 * The advisory lock every Gatehouse process takes while it migrates (an arbitrary constant, 'GATE' 'HOUS' in ASCII):
 * replicas started together wait for each other instead of racing over `CREATE SCHEMA`/`CREATE TABLE`, and the later
 * ones then find nothing left to apply.
 */
const MIGRATION_LOCK: [number, number] = [0x47415445, 0x484f5553];

/** Opens the pool and applies pending migrations (under the advisory lock); the pool is ended if that fails. */
export async function openPostgres(options: PostgresOptions): Promise<{ pool: pg.Pool; db: PostgresDb }> {
  const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 });
  // An idle connection that the server drops (a restart, a network cut) must not crash the process: the pool
  // discards it and the next query opens a new one.
  pool.on("error", () => {});
  try {
    await migrateUnderLock(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return { pool, db: drizzle({ client: pool, schema }) };
}

async function migrateUnderLock(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1, $2)", MIGRATION_LOCK);
    try {
      await refuseNewerPostgresSchema(client);
      await migrate(drizzle({ client }), { migrationsFolder });
    } finally {
      await client.query("SELECT pg_advisory_unlock($1, $2)", MIGRATION_LOCK);
    }
  } finally {
    client.release();
  }
}

/** Refuses a database that a newer Gatehouse migrated (newer-schema.ts), reading the newest migration it records. */
async function refuseNewerPostgresSchema(client: pg.PoolClient): Promise<void> {
  const { rows: recorded } = await client.query("SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present");
  if (recorded[0]?.present !== true) return;
  const { rows } = await client.query<{ newest: string | null }>("SELECT max(created_at)::text AS newest FROM drizzle.__drizzle_migrations");
  refuseNewerSchema(rows[0]?.newest ?? null, migrationsFolder);
}
