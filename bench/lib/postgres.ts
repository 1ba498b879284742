import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDatabase, launchPostgresCluster, startedCluster } from "../../test/support/postgres-server.js";
import type { SharedDatabase } from "./servers.js";

/**
 * The PostgreSQL 15 server the bench's PostgreSQL rows run on: the tests' own launcher (test/support/postgres-server.ts:
 * initdb and pg_ctl as the `postgres` user in a temporary directory, a free port, fsync and synchronous_commit on,
 * every other setting initdb's default), launched when the PostgreSQL rows begin, so it idles through none of the
 * SQLite runs, and stopped and removed at the end of the run, on failure, and on Ctrl-C or kill (`stopNow`).
 */
export interface BenchPostgres {
  /** Where it runs, for the log: its address and its temporary directory. */
  where: string;
  /** A new, empty database for one deployment (one Gatehouse, or three replicas), and the master key file they read. */
  newDatabase(name: string): Promise<SharedDatabase>;
  /** Starts a new peak window of the server's memory. */
  resetPeakMemory(): void;
  /** The largest memory of the server's processes sampled since the last reset, in MB (see `clusterPssKb`). */
  peakMemoryMb(): number;
  /** Stops the server and removes its directory (with `keepLogIn`, its log is copied there first as postgres.log). */
  stop(): Promise<void>;
  /** The same, synchronously: the bench is exiting. */
  stopNow(): void;
}

/** How often the server's memory is sampled while the PostgreSQL rows run. */
const SAMPLE_MS = 250;

/** The pids of a process's children (PostgreSQL's backends and helpers are the postmaster's children). */
function childrenOf(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  if (existsSync(file)) return readFileSync(file, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  // Kernels without CONFIG_PROC_CHILDREN: the parent pid of every process.
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return Number(readFileSync(`/proc/${entry}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * The memory of the whole server in kB: the proportional set size (Pss, /proc/<pid>/smaps_rollup) of the postmaster
 * and of each of its processes, summed. Each process's RSS counts every page of shared buffers it touched, so summing
 * RSS would count them once per backend; Pss shares each page among the processes that map it, and the sum is the
 * server's footprint. 0 when the server is not running.
 */
function clusterPssKb(dataDir: string): number {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return 0;
  }
  let total = 0;
  for (const pid of [postmaster, ...childrenOf(postmaster)]) {
    try {
      total += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
    } catch {
      // The process ended between the listing and the read (a backend whose connection closed).
    }
  }
  return total;
}

/**
 * Launches the server in the background and returns at once, so that the caller holds `stopNow` while initdb and the
 * start run (a Ctrl-C then must stop it too); `ready()` waits for the start.
 */
export async function launchPostgres(workDir: string, keepLogIn?: string): Promise<BenchPostgres & { ready(): Promise<void> }> {
  const cluster = await launchPostgresCluster();
  const dataDir = join(cluster.directory, "data");
  let timer: NodeJS.Timeout | undefined;
  let peakKb = 0;
  const stopNow = () => {
    clearInterval(timer);
    const log = join(cluster.directory, "server.log");
    if (keepLogIn && existsSync(log)) copyFileSync(log, join(keepLogIn, "postgres.log"));
    cluster.stopNow();
  };
  // Every deployment's replicas read this one key; the bench writes it, as an operator would (README, "Scaling out").
  const keyFile = join(workDir, "master.key");
  writeFileSync(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  return {
    where: `${new URL(cluster.url).host}, ${cluster.directory}`,
    async ready() {
      await startedCluster(cluster);
      timer = setInterval(() => (peakKb = Math.max(peakKb, clusterPssKb(dataDir))), SAMPLE_MS);
      timer.unref();
    },
    async newDatabase(name) {
      const { url } = await createDatabase(cluster.url, name);
      return { url, keyFile };
    },
    resetPeakMemory() {
      peakKb = clusterPssKb(dataDir);
    },
    peakMemoryMb() {
      peakKb = Math.max(peakKb, clusterPssKb(dataDir));
      return Math.round(peakKb / 1024);
    },
    async stop() {
      await cluster.started;
      stopNow();
    },
    stopNow,
  };
}
