import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";

/**
 * What a test server stored, read from its database whichever engine it runs on (GATEHOUSE_TEST_ENGINE: SQLite's
 * gatehouse.db in the data dir, or the PostgreSQL database test/support/server.ts made for that data dir), for tests
 * that check how a value is stored (a hash, a sealed secret, a counter) rather than what the API answers. Read-only,
 * one connection per call, closed before it returns.
 */
export interface StoredServer {
  dataDir: string;
}

/** The PostgreSQL URL of a test server's data dir, when it runs on PostgreSQL (test/support/server.ts `postgresFor`). */
function postgresUrlOf(server: StoredServer): string | undefined {
  const marker = join(server.dataDir, "postgres-url");
  return existsSync(marker) ? readFileSync(marker, "utf8") : undefined;
}

/** The column that orders a table's rows as they were added: SQLite's rowid, PostgreSQL's `position`. */
export function insertionOrder(server: StoredServer): "rowid" | "position" {
  return postgresUrlOf(server) === undefined ? "rowid" : "position";
}

/** BIGINT columns (times in ms) as numbers, as SQLite gives them and the schemas type them. */
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};

/**
 * The rows `query` selects, its `?` placeholders bound to `params` in order. Write the query in SQL both engines read
 * (the table and column names are the same in both schemas).
 */
export async function storedRows<Row extends Record<string, unknown>>(server: StoredServer, query: string, ...params: unknown[]): Promise<Row[]> {
  const url = postgresUrlOf(server);
  if (url === undefined) {
    const db = new Database(join(server.dataDir, "gatehouse.db"), { readonly: true });
    try {
      return db.prepare(query).all(...params) as Row[];
    } finally {
      db.close();
    }
  }
  let n = 0;
  const client = new pg.Client({ connectionString: url, types });
  await client.connect();
  try {
    return (await client.query<Row>(query.replace(/\?/g, () => `$${++n}`), params)).rows;
  } finally {
    await client.end();
  }
}

/** The one row `query` selects (fails the test when there is none). */
export async function storedRow<Row extends Record<string, unknown>>(server: StoredServer, query: string, ...params: unknown[]): Promise<Row> {
  const [row] = await storedRows<Row>(server, query, ...params);
  if (row === undefined) throw new Error(`no stored row for: ${query} (${params.map(String).join(", ")})`);
  return row;
}

/** The master key file the test server was started with: the data dir's own, or the shared one given to PostgreSQL replicas. */
export function masterKeyFileOf(server: StoredServer): string {
  return join(server.dataDir, postgresUrlOf(server) === undefined ? "master.key" : "shared-master.key");
}

/** The master key the test server seals with, read from its file. */
export function masterKeyOf(server: StoredServer): Buffer {
  return Buffer.from(readFileSync(masterKeyFileOf(server), "utf8").trim(), "base64");
}
