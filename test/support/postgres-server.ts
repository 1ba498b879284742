import { execFile, execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

/**
 * A REAL PostgreSQL 15 server of its own: Debian's server binaries (`apt-get install -y postgresql` where they are
 * missing), a new cluster in a temporary directory owned by the `postgres` user (the tests and the bench run as root,
 * which PostgreSQL refuses to run as), listening on a free port of 127.0.0.1 and on a unix socket in that directory,
 * with fsync on as in production; stopped and removed by its owner. Shared by the tests (test/support/postgres.ts,
 * launched once per vitest run) and the bench (bench/lib/postgres.ts), so both run Gatehouse on the same kind of
 * server. Nothing here depends on vitest.
 */

const BIN = process.env["GATEHOUSE_PG_BIN"] ?? "/usr/lib/postgresql/15/bin";
const SERVER_USER = "postgres";
const run = promisify(execFile);

/** Where a cluster is found: its superuser URL, and the file that says whether it started. */
export interface ClusterAddress {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`: the superuser on the maintenance database. */
  url: string;
  /** "ready" once the server accepts connections, or "failed" and why on the next line. */
  statusFile: string;
}

export interface PostgresCluster extends ClusterAddress {
  /** The cluster's temporary directory: `data/` (its `postmaster.pid` names the server's process), `server.log`. */
  directory: string;
  /** Settles when the start has finished, well or not (the status file then says which). */
  started: Promise<void>;
  /** Waits for the start to finish, stops the server (fast: open sessions are ended) and removes its directory. */
  stop(): Promise<void>;
  /** The same, synchronously, for a process that is exiting; may follow `stop`. */
  stopNow(): void;
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

/** A server binary and its arguments, run as the postgres user (through runuser when we are root, as here). */
function asServerUser(binary: string, args: string[]): [string, string[]] {
  const command = join(BIN, binary);
  return process.getuid?.() === 0 ? ["runuser", ["-u", SERVER_USER, "--", command, ...args]] : [command, args];
}

/** The one role of the test cluster whose password is checked (scram-sha-256); every other login is trusted. */
export const PASSWORD_CHECKED_ROLE = "gatehouse_password_checked";

/** Picks a directory and a port at once and starts the cluster in the background (see `started`). */
export async function launchPostgresCluster(): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-pg-"));
  const data = join(dir, "data");
  const statusFile = join(dir, "status");
  const port = await freePort();
  let running = false;
  let removed = false;
  const stopNow = () => {
    if (running) {
      running = false;
      try {
        execFileSync(...asServerUser("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w"]), { stdio: "ignore" });
      } catch {
        // Already gone: nothing to stop.
      }
    }
    if (!removed) rmSync(dir, { recursive: true, force: true });
    removed = true;
  };
  const start = async () => {
    if (!existsSync(join(BIN, "pg_ctl"))) {
      throw new Error(`PostgreSQL 15's server binaries are not in ${BIN}: install them with \`apt-get install -y postgresql\` (or set GATEHOUSE_PG_BIN)`);
    }
    if (process.getuid?.() === 0) {
      const [uid, gid] = ["-u", "-g"].map((flag) => Number(execFileSync("id", [flag, SERVER_USER], { encoding: "utf8" }).trim()));
      chownSync(dir, uid!, gid!);
    }
    chmodSync(dir, 0o700);
    // initdb's own files need no sync (a crash during setup only fails the run); the server runs with fsync on.
    await run(...asServerUser("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.utf8", "--no-sync"]));
    // Every login is trusted, but for one role whose password is checked: the tests of a wrong password (28P01) log in
    // as it. The first matching line of pg_hba.conf decides.
    const hba = join(data, "pg_hba.conf");
    writeFileSync(hba, `host all ${PASSWORD_CHECKED_ROLE} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`);
    const options = [
      "-c listen_addresses=127.0.0.1",
      `-c port=${port}`,
      `-c unix_socket_directories=${dir}`,
      "-c fsync=on",
      "-c synchronous_commit=on",
      "-c max_connections=300",
    ].join(" ");
    running = true;
    await run(...asServerUser("pg_ctl", ["start", "-D", data, "-w", "-t", "120", "-l", join(dir, "server.log"), "-o", options]));
  };
  const started = start().then(
    () => writeFileSync(statusFile, "ready"),
    (error: unknown) => writeFileSync(statusFile, `failed\n${(error as Error).message ?? String(error)}`),
  );
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    statusFile,
    directory: dir,
    started,
    stopNow,
    async stop() {
      await started;
      stopNow();
    },
  };
}

/** Waits for the start of a cluster this process launched; throws its reason when it did not start. */
export async function startedCluster(cluster: PostgresCluster): Promise<void> {
  await cluster.started;
  const status = readFileSync(cluster.statusFile, "utf8");
  if (status !== "ready") throw new Error(`PostgreSQL did not start: ${status.replace(/^failed\n/, "")}`);
}

/** A URL like `url` naming another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * A new, empty database `name` on the cluster of the superuser URL `clusterUrl` (`CREATE DATABASE`): its URL, and
 * `drop()` that removes it (ending any session still on it).
 */
export async function createDatabase(clusterUrl: string, name: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: clusterUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  return { url: withDatabase(clusterUrl, name), name, drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
