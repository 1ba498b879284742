import type { Measurement } from "./drivers.js";
import type { BenchOptions, Engine } from "./options.js";
import type { SqlTraceEntry } from "./servers.js";

export interface Row {
  scenario: string;
  title: string;
  protocol: string;
  server: "bare" | "gatehouse" | "argon2-loop";
  generator: "wrk" | "h2c-load" | "h2load" | "argon2-loop";
  /** Gatehouse's rows: the storage engine, and how many replicas shared the load (one generator each). */
  engine?: Engine;
  replicas?: number;
  /** All generators' connections together (split evenly across the replicas). */
  connections: number;
  /** A rate-limited run at this total rate (half of the same scenario's saturated rate). */
  pacedRate?: number;
  /** The measured window's length in seconds (the warm-up left out). */
  windowS: number;
  /** Requests are alike (reads): a repeated sequence is fine. */
  repeats: boolean;
  /**
   * Several replicas: requests and req/s summed over their generators, unexpected answers summed, p50 and p99 the
   * highest of the generators' (the worst replica's); `generators` keeps each one's own figures.
   */
  measurement: Measurement & { meanMs?: number };
  generators?: Measurement[];
  /** The server's peak RSS; with several replicas the highest, each one's in `replicaPeakRssMb`. */
  peakRssMb?: number;
  replicaPeakRssMb?: number[];
  /**
   * The server's CPU time (user + system) per answered request over the measured run: wrk's runs on one server. Less
   * moved than req/s by other work on the machine, so it shows what a change bought when the machine is busy.
   */
  serverCpuUsPerRequest?: number;
  /** PostgreSQL's rows: the database server's peak memory during the run (its processes' Pss summed, sampled). */
  postgresPeakMb?: number;
  /** "run": VmHWM was reset before the run (clear_refs); "process": the kernel refused, it is the peak since start. */
  peakRssScope?: "run" | "process";
  /**
   * The run this row's ratio divides by, measured around it (bench/run.ts, RunPlan.reference): the lengths in seconds
   * of its runs (one right before this row's, one right after) and their figures together.
   */
  reference?: { server: Row["server"]; scenario: string; runsS: number[]; measurement: Measurement };
  /**
   * Filled by `addRatios`: this row's rate over another's, measured in the same run with the same generator: over its
   * reference's when it has one (`measuredAround`), else over the other row's.
   */
  ratio?: { value: number; of: string; measuredAround?: boolean };
  /** CreateHumanUser with a plain password: over the bare argon2id loop. */
  hashRatio?: number;
  /** Several replicas: this rate over the same run on one replica of the same engine. */
  replicaRatio?: number;
  /** `--scale`: the database the server ran on (absent: a plain run, whose database starts empty). */
  database?: "empty" | "scaled";
  /** `--scale`, on the scaled database's rows: this rate over the same run on the empty database. */
  scaleRatio?: number;
  /** `--trace-sql`: the statements the server ran during this run, most time first. */
  sql?: { entries: SqlTraceEntry[]; includesWarmUp: boolean };
}

/** What `--scale` seeded, for the report's header and the JSON. */
export interface ScaleInfo {
  users: number;
  organizations: number;
  memberships: number;
  events: number;
  /** The seed's own time (for a cached data dir, that of the seed that made it). */
  seedSeconds: number;
  cached: boolean;
  /** Time this run spent making the data dir (the seed, or copying the cached one). */
  prepareSeconds: number;
  databaseMb: number;
  seederPeakRssMb: number;
}

/** A scaled-database figure must stay within 10 % of the empty database's; the server's peak RSS under this. */
export const SCALE_MIN_RATIO = 0.9;
export const SCALE_MAX_RSS_MB = 250;

export interface Target {
  name: string;
  protocol: string;
  value: number;
  threshold: string;
  pass: boolean;
  /** Not a figure but the run's validity: a failure means the bench is broken, and fails the run even without --enforce. */
  integrity?: boolean;
  /** The value is a peak RSS in MB. */
  rssMb?: boolean;
}

const DURABLE_WRITES = ["update-application", "add-grant-member", "verify-email", "create-user-imported"];
/** The scenarios whose ratio over the no-op has a target. */
export const NOOP_RATIO_TARGETED = ["get-project", ...DURABLE_WRITES];

const find = (rows: Row[], match: Partial<Row>) =>
  rows.find((r) => r.pacedRate === undefined && Object.entries(match).every(([k, v]) => r[k as keyof Row] === v));

const scaled = (row: Row) => row.database === "scaled";

/** Each ratio pairs two rows of one protocol and one generator: only the server or the scenario differs. */
export function addRatios(rows: Row[]): void {
  const loop = find(rows, { server: "argon2-loop" });
  for (const row of rows) {
    if (row.pacedRate !== undefined || row.server !== "gatehouse") continue;
    const sameDeployment = { engine: row.engine, replicas: row.replicas, database: row.database };
    const base =
      row.scenario === "health"
        ? find(rows, { server: "bare", scenario: "health", protocol: row.protocol, generator: row.generator })
        : find(rows, { server: "gatehouse", scenario: "health", protocol: row.protocol, generator: row.generator, ...sameDeployment });
    const of = row.scenario === "health" ? "bare" : "no-op";
    if (row.reference && row.reference.measurement.rps > 0) row.ratio = { value: row.measurement.rps / row.reference.measurement.rps, of, measuredAround: true };
    else if (base && base.measurement.rps > 0) row.ratio = { value: row.measurement.rps / base.measurement.rps, of };
    if (scaled(row)) {
      const empty = find(rows, { server: "gatehouse", scenario: row.scenario, protocol: row.protocol, generator: row.generator, engine: row.engine, replicas: row.replicas, database: "empty" });
      if (empty && empty.measurement.rps > 0) row.scaleRatio = row.measurement.rps / empty.measurement.rps;
    }
    if (row.scenario === "create-user-password" && loop && loop.measurement.rps > 0) row.hashRatio = row.measurement.rps / loop.measurement.rps;
    if ((row.replicas ?? 1) > 1) {
      const one = find(rows, { server: "gatehouse", scenario: row.scenario, protocol: row.protocol, generator: row.generator, engine: row.engine, replicas: 1, database: row.database });
      if (one && one.measurement.rps > 0) row.replicaRatio = row.measurement.rps / one.measurement.rps;
    }
  }
}

/**
 * Issue 12's targets are SQLite's (group commit, synchronous=FULL, one process): PostgreSQL's rows are figures only.
 * Their answers are checked like every row's (the integrity line).
 */
const targeted = (row: Row) => row.engine !== "postgres";

export function evaluateTargets(rows: Row[]): Target[] {
  const targets: Target[] = [];
  const gatehouse = rows.filter((r) => r.server === "gatehouse" && r.pacedRate === undefined && r.generator !== "h2load" && targeted(r));
  // The scaled database's rows have targets of their own: each as fast as on the empty database, and little memory.
  for (const row of gatehouse.filter(scaled)) {
    if (row.scaleRatio !== undefined) {
      targets.push({ name: `scale: ${row.title} within 10 % of the empty database`, protocol: row.protocol, value: row.scaleRatio, threshold: `≥ ${SCALE_MIN_RATIO.toFixed(2)}`, pass: row.scaleRatio >= SCALE_MIN_RATIO });
    }
  }
  const scaledRss = gatehouse.filter(scaled).map((r) => r.peakRssMb ?? 0);
  if (scaledRss.length > 0) {
    const peak = Math.max(...scaledRss);
    targets.push({ name: "scale: server peak RSS on the scaled database", protocol: "all", value: peak, threshold: `≤ ${SCALE_MAX_RSS_MB} MB`, pass: peak <= SCALE_MAX_RSS_MB, rssMb: true });
  }
  for (const row of gatehouse.filter((r) => !scaled(r))) {
    const ratio = row.ratio?.value;
    if (row.scenario === "health" && ratio !== undefined) targets.push({ name: "no-op ≥ 80 % of the bare ceiling", protocol: row.protocol, value: ratio, threshold: "≥ 0.80", pass: ratio >= 0.8 });
    if (row.scenario === "get-project" && ratio !== undefined) targets.push({ name: "authenticated read ≥ 70 % of no-op", protocol: row.protocol, value: ratio, threshold: "≥ 0.70", pass: ratio >= 0.7 });
    if (DURABLE_WRITES.includes(row.scenario) && ratio !== undefined) {
      targets.push({ name: `${row.title} ≥ 60 % of no-op`, protocol: row.protocol, value: ratio, threshold: "≥ 0.60", pass: ratio >= 0.6 });
    }
    if (row.scenario === "create-user-password" && row.hashRatio !== undefined) {
      targets.push({ name: "CreateHumanUser (argon2id) ≥ 80 % of the bare argon2id loop", protocol: row.protocol, value: row.hashRatio, threshold: "≥ 0.80", pass: row.hashRatio >= 0.8 });
    }
  }
  for (const row of rows.filter((r) => r.pacedRate !== undefined && targeted(r))) {
    const p99 = row.measurement.p99Ms;
    targets.push({ name: `${row.title} p99 at half of saturation`, protocol: row.protocol, value: p99, threshold: "≤ 10 ms", pass: p99 <= 10 });
  }
  // A run whose answers were not the expected ones, or whose writes repeated, measured something else; so did one whose
  // no-op measured around it finished no call (its ratio would silently fall back to the other row's).
  // On the scaled database a run where no call finished in the window (each took seconds) is a figure, 0, not a
  // broken bench: its scale target fails, the integrity line does not.
  const broken = rows.filter(
    (r) =>
      r.measurement.unexpected > 0 ||
      (r.reference !== undefined && (r.reference.measurement.unexpected > 0 || r.reference.measurement.requests === 0)) ||
      (r.measurement.wrapped && !r.repeats) ||
      (r.measurement.requests === 0 && !scaled(r)),
  );
  targets.push({ name: "every answer as expected, no write repeated", protocol: "all", value: broken.length, threshold: "0 runs", pass: broken.length === 0, integrity: true });
  return targets;
}

const usersLabel = (users: number) => (users >= 1_000_000 && users % 1_000_000 === 0 ? `${users / 1_000_000}M users` : users >= 1_000 && users % 1_000 === 0 ? `${users / 1_000}k users` : `${users} users`);

const fixed = (value: number | undefined, digits: number) => (value === undefined || !Number.isFinite(value) ? "-" : value.toFixed(digits));

function table(headers: string[], lines: string[][], rightAligned: Set<number>): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [format(headers), format(widths.map((w) => "-".repeat(w))), ...lines.map(format)].join("\n");
}

/** PostgreSQL's runs' length, where the report has its rows and it differs from the others'. */
function postgresRunNote(rows: Row[], options: BenchOptions): string {
  const { warmupS, seconds } = options.postgres;
  if (!rows.some((r) => r.engine === "postgres") || (warmupS === options.warmupS && seconds === options.seconds)) return "";
  return ` (PostgreSQL's: ${warmupS} s + ${seconds} s)`;
}

export function formatReport(rows: Row[], targets: Target[], options: BenchOptions, cores: number, scale?: ScaleInfo): string {
  const lines = rows.map((r) => {
    const notes: string[] = [];
    if (r.reference) notes.push(`ratio over the ${r.ratio?.of ?? r.reference.server} around it: ${r.reference.measurement.rps.toFixed(0)} req/s`);
    if (r.scaleRatio !== undefined) notes.push(`${r.scaleRatio.toFixed(2)} of the empty database`);
    if (r.pacedRate !== undefined) notes.push(`paced at ${r.pacedRate.toFixed(0)} req/s (half of saturation)`);
    if (r.hashRatio !== undefined) notes.push(`${r.hashRatio.toFixed(2)} of the bare argon2id loop`);
    if (r.replicaRatio !== undefined) notes.push(`${r.replicaRatio.toFixed(2)} of one replica`);
    if (r.measurement.meanMs !== undefined) notes.push(`h2load cross-check; p99 column = mean`);
    if (r.measurement.unexpected > 0) notes.push(`${r.measurement.unexpected} UNEXPECTED ANSWERS ${JSON.stringify(r.measurement.raw ?? {})}`);
    if (r.measurement.wrapped && !r.repeats) notes.push("SEQUENCE RAN OUT (writes repeated)");
    if (r.measurement.requests === 0) notes.push(`NO CALL FINISHED in the ${r.windowS} s window`);
    const title = r.server === "bare" ? `${r.title} [bare ceiling]` : scaled(r) ? `${r.title} [${scale ? usersLabel(scale.users) : "scaled"}]` : r.title;
    const replicas = r.replicas ?? 1;
    return [
      title,
      r.engine ? `${r.engine}${replicas > 1 ? ` ×${replicas}` : ""}` : "-",
      r.protocol,
      replicas > 1 ? `${r.generator} ×${replicas}` : r.generator,
      String(r.connections),
      fixed(r.measurement.rps, 0),
      fixed(r.measurement.p50Ms, 2),
      fixed(r.measurement.meanMs ?? r.measurement.p99Ms, 2),
      r.ratio ? `${r.ratio.value.toFixed(2)} of ${r.ratio.of}` : "",
      r.serverCpuUsPerRequest === undefined ? "-" : fixed(r.serverCpuUsPerRequest, 0),
      r.peakRssMb === undefined ? "-" : `${(r.replicaPeakRssMb ?? [r.peakRssMb]).join("/")}${r.peakRssScope === "process" ? "*" : ""}`,
      r.postgresPeakMb === undefined ? "-" : String(r.postgresPeakMb),
      notes.join("; "),
    ];
  });
  const out = [
    `Gatehouse bench, ${options.mode} run, ${cores} cores, ${options.connections} connections, ${options.warmupS} s warm-up + ${options.seconds} s per run${postgresRunNote(rows, options)}`,
    ...(scale
      ? [
          `scale: the rows marked [${usersLabel(scale.users)}] ran on a data dir of ${scale.users} users in ${scale.organizations} organizations, ${scale.memberships} memberships, ${scale.events} events (${scale.databaseMb} MB), seeded in ${scale.seedSeconds.toFixed(0)} s${scale.cached ? ` (cached; copied in ${scale.prepareSeconds.toFixed(0)} s)` : ""}; the others on a fresh one`,
        ]
      : []),
    "",
    table(["scenario", "engine", "protocol", "generator", "conns", "req/s", "p50 ms", "p99 ms", "ratio", "CPU µs/req", "peak RSS MB", "PostgreSQL MB", "notes"], lines, new Set([4, 5, 6, 7, 9, 10, 11])),
    "",
    table(
      ["", "target", "protocol", "measured", "needed"],
      targets.map((t) => [
        t.pass ? "PASS" : "FAIL",
        t.name,
        t.protocol,
        t.name.includes("p99") ? `${fixed(t.value, 2)} ms` : t.rssMb ? `${t.value} MB` : t.protocol === "all" ? String(t.value) : fixed(t.value, 2),
        t.threshold,
      ]),
      new Set([3]),
    ),
  ];
  if (options.traceSql) out.push("", formatSqlTrace(rows));
  if (rows.some((r) => (r.replicas ?? 1) > 1)) {
    out.push(
      "",
      "×3: three replicas on one PostgreSQL database, one generator per replica started together, the connections split between them;",
      "req/s summed, p50 and p99 the worst replica's, peak RSS per replica; PostgreSQL MB: the database server's processes (Pss summed).",
    );
  }
  if (rows.some((r) => r.peakRssScope === "process")) out.push("", "* peak since the server started: the kernel refused to reset the peak (/proc/<pid>/clear_refs) before the run");
  if (options.mode === "smoke") out.push("", "(smoke run: 2 connections and 1-second runs check the harness; its figures are not the targets' conditions)");
  return out.join("\n");
}

/** `--trace-sql`: per run, the statements that took most of the database's time, per request and on average. */
function formatSqlTrace(rows: Row[]): string {
  const out = ["SQL per run (--trace-sql: the timing wrapper slows the server; compare runs of one trace with each other):"];
  for (const row of rows.filter((r) => r.sql)) {
    const { entries, includesWarmUp } = row.sql!;
    const totalMs = entries.reduce((sum, e) => sum + e.totalMs, 0);
    const requests = row.measurement.requests;
    out.push(
      "",
      `${row.title}${row.database === "scaled" ? " [scaled]" : ""}, ${row.protocol}: ${requests} requests, ${(totalMs / Math.max(1, requests)).toFixed(3)} ms of SQL per request${includesWarmUp ? " (SQL counts include the warm-up)" : ""}`,
    );
    for (const entry of entries.slice(0, 6)) {
      const perRequest = entry.calls / Math.max(1, requests);
      // The column list says little and hides the rest: `select … from`.
      const sql = entry.sql.replace(/\s+/g, " ").replace(/^select (.{40,}?) from /i, "select … from ");
      out.push(`  ${perRequest.toFixed(2).padStart(6)}/req  ${((entry.totalMs * 1000) / entry.calls).toFixed(1).padStart(9)} µs  ${((entry.totalMs / Math.max(totalMs, 1e-9)) * 100).toFixed(0).padStart(3)} %  ${sql.length > 150 ? `${sql.slice(0, 147)}...` : sql}`);
    }
  }
  return out.join("\n");
}
