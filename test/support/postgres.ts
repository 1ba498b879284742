import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/**
 * A REAL PostgreSQL 15 for the tests: Debian's server binaries (`apt-get install -y postgresql` where they are
 * missing), a new cluster in a temporary directory owned by the `postgres` user (the tests run as root, which
 * PostgreSQL refuses to run as), listening on a free port of 127.0.0.1 and on a unix socket in that directory, with
 * fsync on as in production. Started once per vitest run (test/support/postgres-global-setup.ts), stopped and
 * removed at the end. Never a mock: the store's contract is proven against the server it runs on.
 */

const BIN = process.env["GATEHOUSE_PG_BIN"] ?? "/usr/lib/postgresql/15/bin";
const SERVER_USER = "postgres";

export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`: the superuser on the maintenance database. */
  url: string;
  /** Stops the server (fast: open sessions are ended) and removes its directory; may be called twice. */
  stop(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Runs a server binary as the postgres user (runuser when we are root, as the tests are here). */
function runAsServerUser(binary: string, args: string[]): string {
  const command = join(BIN, binary);
  const asRoot = process.getuid?.() === 0;
  return execFileSync(asRoot ? "runuser" : command, asRoot ? ["-u", SERVER_USER, "--", command, ...args] : args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  if (!existsSync(join(BIN, "pg_ctl"))) {
    throw new Error(`PostgreSQL 15's server binaries are not in ${BIN}: install them with \`apt-get install -y postgresql\` (or set GATEHOUSE_PG_BIN)`);
  }
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-pg-"));
  const data = join(dir, "data");
  const ids = process.getuid?.() === 0 ? execFileSync("id", ["-u", SERVER_USER], { encoding: "utf8" }).trim() : undefined;
  if (ids !== undefined) {
    const uid = Number(ids);
    const gid = Number(execFileSync("id", ["-g", SERVER_USER], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      try {
        runAsServerUser("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w"]);
      } catch {
        // Already gone: nothing to stop.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // initdb's own files need no sync (a crash during setup just fails the run); the server runs with fsync on.
    runAsServerUser("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.utf8", "--no-sync"]);
    const port = await freePort();
    const options = [
      "-c listen_addresses=127.0.0.1",
      `-c port=${port}`,
      `-c unix_socket_directories=${dir}`,
      "-c fsync=on",
      "-c synchronous_commit=on",
      "-c max_connections=300",
    ].join(" ");
    started = true;
    runAsServerUser("pg_ctl", ["start", "-D", data, "-w", "-t", "60", "-l", join(dir, "server.log"), "-o", options]);
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/** A URL like `url` naming another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A new, empty database on the cluster (`CREATE DATABASE`), for one test: its URL, and `drop()` that removes it
 * (ending any session still on it).
 */
export async function createTestDatabase(clusterUrl: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `gatehouse_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(clusterUrl, name),
    name,
    drop: async () => {
      const client = new pg.Client({ connectionString: clusterUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
