import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { once } from "node:events";

export interface BenchServer {
  name: "bare" | "gatehouse";
  url: string;
  port: number;
  pid: number;
  /** Starts a new peak-RSS window (Linux: writing 5 to /proc/<pid>/clear_refs); false when refused. */
  resetPeakRss(): boolean;
  /** VmHWM of /proc/<pid>/status in MB: the peak since start or since the last reset. */
  peakRssMb(): number;
  /** CPU time the process has used since it started (user + system, /proc/<pid>/stat), in ms. */
  cpuMs(): number;
  /** With `--trace-sql`: the statements run since the last call (bench/lib/sql-trace.mjs), and counting anew. */
  takeSqlTrace?(): Promise<SqlTraceEntry[]>;
  stop(): Promise<void>;
  /** SIGTERM, without waiting: the bench itself is being stopped (Ctrl-C, kill). */
  stopNow(): void;
}

/** One SQL statement as bench/lib/sql-trace.mjs counted it. */
export interface SqlTraceEntry {
  sql: string;
  calls: number;
  totalMs: number;
}

export const REPO = new URL("../../", import.meta.url).pathname;

/** Where the servers' code is run from: the checkout, or the run's own copy of it (`snapshotCode`). */
let serverCode = REPO;

/**
 * Copies the code the servers run (src, gen, bench/servers, the SQL trace, package.json, the tsconfigs and the build's
 * after-step; node_modules linked) into `workDir`, compiles it the way `npm run build` does (tsc with
 * tsconfig.build.json, then scripts/after-build.mjs) into the copy's dist/, and runs every server of this bench from
 * that build: what `npm start` runs, plain JavaScript without a loader (tsx kept about 40 MB more resident and wraps
 * every named inner function of Gatehouse's own code at run time). The tree is shared: others commit and edit while
 * a bench runs (a `--scale` run lasts up to half an hour), and the two sides of a ratio must run the same code.
 * The types were checked by `npm test`; the bench's build only emits (`--noCheck`, about 10 s). Returns the copy's
 * directory.
 */
export function snapshotCode(workDir: string): string {
  const dir = join(workDir, "code");
  for (const entry of ["src", "gen", "bench/servers", "bench/lib/sql-trace.mjs", "package.json", "tsconfig.json", "tsconfig.build.json", "scripts/after-build.mjs"]) {
    cpSync(join(REPO, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"), "dir");
  // The production build's settings, with the bare ceiling's server compiled alongside.
  writeFileSync(join(dir, "tsconfig.bench.json"), JSON.stringify({ extends: "./tsconfig.build.json", include: ["src", "gen", "bench/servers"] }));
  execFileSync(join(REPO, "node_modules/.bin/tsc"), ["-p", "tsconfig.bench.json", "--noCheck"], { cwd: dir, stdio: "inherit" });
  execFileSync(process.execPath, ["scripts/after-build.mjs"], { cwd: dir, stdio: "inherit" });
  serverCode = dir;
  return dir;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function handle(name: BenchServer["name"], child: ChildProcess, port: number): BenchServer {
  const pid = child.pid!;
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    port,
    pid,
    resetPeakRss() {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, "5");
        return true;
      } catch {
        return false;
      }
    },
    cpuMs() {
      // Fields 14 and 15, after the command name (in parentheses, and it may hold spaces or a parenthesis); in clock ticks,
      // 100 a second on Linux (USER_HZ).
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    peakRssMb() {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
      return Math.round(kb / 1024);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
    },
    stopNow() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    },
  };
}

async function waitFor(what: string, child: ChildProcess, ready: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} while starting`);
    if (await ready().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} did not start within ${timeoutMs / 1000} s`);
}

/** The framework ceiling (bench/servers/bare-server.ts), compiled and run like Gatehouse (snapshotCode). */
export async function startBare(): Promise<BenchServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...profiling(), "dist/bench/servers/bare-server.js", String(port)], { cwd: serverCode, stdio: ["ignore", "pipe", "inherit"] });
  let listening = false;
  child.stdout!.on("data", (chunk: Buffer) => {
    if (chunk.toString().includes("listening")) listening = true;
  });
  await waitFor("the bare server", child, async () => listening);
  return handle("bare", child, port);
}

/** A PostgreSQL database shared by replicas, and the master key file they all read. */
export interface SharedDatabase {
  url: string;
  keyFile: string;
}

export interface GatehouseStart {
  /** The server's log (one JSON line per call); /dev/null when absent. */
  logFile?: string;
  /** `--trace-sql` (SQLite only): bench/lib/sql-trace.mjs loaded, and where it writes on SIGUSR2. */
  sqlTraceFile?: string;
  /** On PostgreSQL (`GATEHOUSE_DATABASE_URL`, `GATEHOUSE_MASTER_KEY_FILE`) instead of SQLite in the data dir. */
  database?: SharedDatabase;
  /**
   * The server bootstraps an empty database and writes `admin.pat` to its data dir (true unless said): it is ready
   * when that file exists too. A replica started on a database another one bootstrapped writes none.
   */
  bootstraps?: boolean;
}

/**
 * `GATEHOUSE_BENCH_CPU_PROF=DIR`: both servers (and the import command) run under `node --cpu-prof`, each writing its
 * profile to DIR when it stops (Node refuses --cpu-prof in NODE_OPTIONS). For finding where a scenario's time goes,
 * not for figures.
 */
export const profiling = () => {
  const dir = process.env.GATEHOUSE_BENCH_CPU_PROF;
  return dir ? ["--cpu-prof", "--cpu-prof-dir", dir] : [];
};

/**
 * Gatehouse as an operator runs it (`npm start`: the compiled `dist/src/main.js serve`, built by snapshotCode from
 * the run's copy of the code, so a stale dist/ never gets measured) on a fresh data dir: it bootstraps and writes
 * admin.pat (its token is returned; a replica that did not bootstrap has none). Defaults everywhere
 * (synchronous=FULL, log level info: one JSON line per call), except that the mail delivery worker polls once an
 * hour: the mails the set-up queues (VerifyEmail's users) would otherwise be delivered in the middle of later runs.
 */
export async function startGatehouse(dataDir: string, start: GatehouseStart = {}): Promise<BenchServer & { token?: string }> {
  const { logFile, sqlTraceFile, database, bootstraps = true } = start;
  const port = await freePort();
  const out = openSync(logFile ?? "/dev/null", "a");
  const trace = sqlTraceFile ? ["--import", "./bench/lib/sql-trace.mjs"] : [];
  const env = {
    ...process.env,
    ...(sqlTraceFile ? { GATEHOUSE_BENCH_SQL_TRACE: sqlTraceFile } : {}),
    ...(database ? { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_MASTER_KEY_FILE: database.keyFile } : {}),
  };
  const child = spawn(
    process.execPath,
    [...profiling(), ...trace, "dist/src/main.js", "serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir, "--mail-poll-ms", "3600000"],
    { cwd: serverCode, stdio: ["ignore", out, "inherit"], env },
  );
  const tokenFile = join(dataDir, "admin.pat");
  await waitFor("gatehouse", child, async () => {
    if (bootstraps && !existsSync(tokenFile)) return false;
    const response = await fetch(`http://127.0.0.1:${port}/readyz`);
    return response.status === 200;
  });
  const server = { ...handle("gatehouse", child, port), ...(bootstraps ? { token: readFileSync(tokenFile, "utf8").trim() } : {}) };
  if (!sqlTraceFile) return server;
  return {
    ...server,
    async takeSqlTrace() {
      rmSync(sqlTraceFile, { force: true });
      child.kill("SIGUSR2");
      const deadline = Date.now() + 10_000;
      while (!existsSync(sqlTraceFile)) {
        if (Date.now() > deadline) throw new Error("gatehouse wrote no SQL trace within 10 s of SIGUSR2");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return JSON.parse(readFileSync(sqlTraceFile, "utf8")) as SqlTraceEntry[];
    },
  };
}
