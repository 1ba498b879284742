import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { refuseNewerSchema } from "../newer-schema.js";
import * as schema from "./schema/index.js";

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq's URL form; `?sslmode=…` and the like as pg reads them). */
  url: string;
  /** Connections this process keeps at most for reads. Default 10. */
  poolSize?: number;
  /**
   * Connections for commits. Commits are serialized across every replica (pg-commits.ts), so more than one or two per
   * process would only hold connections waiting on the commit lock; the others wait here, in the process, and never
   * keep a read from getting a connection. Default 2.
   */
  commitPoolSize?: number;
  /** How long to wait for a connection to the server before failing (the server is down or unreachable). Default 10 s. */
  connectTimeoutMs?: number;
}

export type PostgresDb = NodePgDatabase<typeof schema>;

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

/**
 * The advisory lock every Gatehouse process takes while it migrates (an arbitrary constant, 'GATE' 'HOUS' in ASCII):
 * replicas started together wait for each other instead of racing over `CREATE SCHEMA`/`CREATE TABLE`, and the later
 * ones then find nothing left to apply.
 */
const MIGRATION_LOCK: [number, number] = [0x47415445, 0x484f5553];

/** The two pools of a store: reads, and commits. */
export interface PostgresPools {
  reads: pg.Pool;
  commits: pg.Pool;
}

/**
 * A pool whose connection attempts give up after `connectTimeoutMs` (a server that is down or unreachable), while a
 * query waiting for a free connection of the pool waits as long as it takes — pg-pool's own connectionTimeoutMillis
 * would fail it, under load, with an internal error. Hence the timeout is the client's, not the pool's.
 */
function createPool(url: string, max: number, connectTimeoutMs: number): pg.Pool {
  class TimedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  }
  const pool = new pg.Pool({ connectionString: url, max, keepAlive: true, Client: TimedClient as unknown as new () => pg.ClientBase });
  // An idle connection that the server drops (a restart, a network cut) must not crash the process: the pool
  // discards it and the next query opens a new one.
  pool.on("error", () => {});
  return pool;
}

/** Opens the pools and applies pending migrations (under the advisory lock); the pools are ended if that fails. */
export async function openPostgres(options: PostgresOptions): Promise<{ pools: PostgresPools; db: PostgresDb; commitDb: PostgresDb }> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const pools = { reads: createPool(options.url, options.poolSize ?? 10, connectTimeoutMs), commits: createPool(options.url, options.commitPoolSize ?? 2, connectTimeoutMs) };
  try {
    await migrateUnderLock(pools.commits);
  } catch (error) {
    await Promise.all([pools.reads.end(), pools.commits.end()]);
    throw error;
  }
  return { pools, db: drizzle({ client: pools.reads, schema }), commitDb: drizzle({ client: pools.commits, schema }) };
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
