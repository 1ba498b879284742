import { parseArgs } from "node:util";
import { PROTOCOLS, type Protocol } from "./encode.js";
import { SCENARIOS } from "./scenarios.js";

export interface BenchOptions {
  mode: "full" | "quick" | "smoke";
  /** Connections (HTTP/1.1) or HTTP/2 sessions, one call in flight on each, on both sides of every ratio. */
  connections: number;
  warmupS: number;
  seconds: number;
  /** The rate-limited runs of durable writes at half of their saturated rate (p99 target). */
  half: { warmupS: number; seconds: number; scenarios: "all" | "update-application" | "none" };
  /** Before its first measured run, each server gets unrecorded runs of Health/Check (and GetProject). */
  serverWarmUp: boolean;
  enforce: boolean;
  protocols: Protocol[];
  scenarios: string[];
  /** Keep the temporary dir (data dir, request files, the server's log). */
  keep: boolean;
  /**
   * `--scale`: after the scenarios on an empty database, the same again on a data dir seeded with `users` users
   * (bench/lib/scale-seed.ts), each compared with its empty-database figure. `reseed`: ignore the cached seed.
   */
  scale?: { users: number; reseed: boolean };
  /** Count the SQL statements each Gatehouse run makes, and their time (bench/lib/sql-trace.mjs; SQLite only). */
  traceSql: boolean;
  /** The storage engines Gatehouse runs on: SQLite (one process), PostgreSQL (one replica, then three on one database). */
  engines: Engine[];
  /**
   * What runs on PostgreSQL: by default the no-op, the authenticated read, two writes and the mix on Connect JSON
   * (`POSTGRES_SCENARIOS`, `POSTGRES_PROTOCOLS`); `--scenarios` / `--protocols` name them for both engines.
   */
  postgres: { scenarios: string[]; protocols: Protocol[]; replicas: number[]; warmupS: number; seconds: number };
}

export const ENGINES = ["sqlite", "postgres"] as const;
export type Engine = (typeof ENGINES)[number];

/**
 * PostgreSQL's rows by default: what the engine changes (the principal read, a commit's round trips and its fsync,
 * the commits of three processes serialized on one row) shows in these; the other writes are the same commit with
 * more work before it, and each protocol's cost is the engine's too, measured on SQLite. Kept short so that `--quick`
 * gains about a minute.
 */
export const POSTGRES_SCENARIOS = ["health", "get-project", "update-application", "add-grant-member", "mixed"];
export const POSTGRES_PROTOCOLS: Protocol[] = ["connect-json-http1"];
/** One Gatehouse on PostgreSQL, then three replicas on one database with the load spread across them. */
export const POSTGRES_REPLICAS = [1, 3];

/** What `--scale` runs unless told otherwise: the reads and writes whose cost could grow with the data (and the no-op as the control). */
export const SCALE_SCENARIOS = ["health", "get-project", "list-events", "list-users", "update-application", "add-grant-member", "verify-email", "create-user-imported", "mixed"];
/** `--scale` runs on Connect JSON unless told otherwise: the flat line is the database's, not the protocol's. */
export const SCALE_PROTOCOLS: Protocol[] = ["connect-json-http1"];
export const DEFAULT_SCALE_USERS = 1_000_000;

const MODES = {
  // Under 10 minutes in all here (595 and 592 s on 2026-11-27; 654 s on a slower 2026-11-28, then 608 s without
  // PostgreSQL's rate-limited runs, then 562 and 549 s with the lean client for VerifyEmail's codes and these
  // shorter PostgreSQL runs, on a slow machine). SQLite: 36 runs of 2 + 7 s (15 of them with a 1 s run of the no-op
  // right before and after), 12 rate-limited runs of 1 + 4 s, the servers' warm-up (9 runs of 1 + 1 s), two h2load
  // cross-checks of 1 + 3 s, and the set-up of the users and codes the pooled scenarios use (1.5 times what their run
  // would use at the expected rate; users made with the bulk import, VerifyEmail's codes one call each, through
  // bench/lib/http1-calls.ts).
  // PostgreSQL: 10 runs of 1 + 5 s (`postgresRun`; no rate-limited ones: no targets there), two warm-ups, the
  // server's start and the pool of partner users.
  full: { connections: 16, warmupS: 2, seconds: 7, postgresRun: { warmupS: 1, seconds: 5 }, half: { warmupS: 1, seconds: 4, scenarios: "all" }, serverWarmUp: true },
  // Under 2 minutes on SQLite, and about one more on PostgreSQL: every scenario on every protocol at full
  // concurrency, briefly (1 + 1 s), and the rate-limited run of UpdateApplication only. CI runs it so the
  // bench cannot rot; its figures are noisy.
  quick: { connections: 16, warmupS: 1, seconds: 1, postgresRun: { warmupS: 1, seconds: 1 }, half: { warmupS: 1, seconds: 1, scenarios: "update-application" }, serverWarmUp: false },
  // Checks the harness end to end without loading a busy machine: quick's runs at 2 connections, and
  // the servers' warm-up that quick leaves out.
  smoke: { connections: 2, warmupS: 1, seconds: 1, postgresRun: { warmupS: 1, seconds: 1 }, half: { warmupS: 1, seconds: 1, scenarios: "update-application" }, serverWarmUp: true },
} as const;

export const USAGE = `npm run bench [-- --quick | --smoke] [--enforce] [--engines a,b] [--protocols a,b] [--scenarios a,b] [--keep]
  (default)   full run, about 10 minutes
  --quick     every scenario briefly, about 2 minutes (under 1.5 without PostgreSQL)
  --smoke     2 connections, 1-second runs: checks the harness, not the server
  --enforce   exit 1 when a target fails (otherwise the exit code is 0 whatever the figures)
  --engines   ${ENGINES.join(",")} (default both; PostgreSQL: one Gatehouse, then three replicas on one database,
              by default ${POSTGRES_SCENARIOS.join(",")} on ${POSTGRES_PROTOCOLS.join(",")})
  --protocols ${PROTOCOLS.join(",")} (both engines)
  --scenarios ${SCENARIOS.map((s) => s.id).join(",")} (both engines)
  --keep      keep the temporary data dir, request files and server log
  --scale     then again on a data dir seeded with 1 000 000 users (1 000 organizations, about 5 000 000 events):
              each scenario within 10 % of its empty-database figure, peak RSS <= 250 MB; by default Connect JSON
              and ${SCALE_SCENARIOS.join(",")}
  --scale-users N   seed N users (N / 1 000 organizations, about 5 N events) instead of 1 000 000
  --scale-reseed    seed anew even when a seeded data dir of N users is cached (os.tmpdir()/gatehouse-bench-scale)
  --trace-sql       count the SQL statements of each Gatehouse run and their time (in the report and the JSON;
                    the timing wrapper slows the server, so the figures of such a run are not the bench's)`;

/** A whole number of users: digits, optionally grouped with "_" (1_000_000). */
export function parseUserCount(value: string): number {
  if (!/^\d+(_\d{3})*$/.test(value)) throw new Error(`--scale-users takes a whole number, got "${value}"`);
  const users = Number(value.replaceAll("_", ""));
  if (users < 1 || !Number.isSafeInteger(users)) throw new Error(`--scale-users must be at least 1, got "${value}"`);
  return users;
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean", default: false },
      smoke: { type: "boolean", default: false },
      enforce: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      protocols: { type: "string" },
      scenarios: { type: "string" },
      scale: { type: "boolean", default: false },
      "scale-users": { type: "string" },
      "scale-reseed": { type: "boolean", default: false },
      "trace-sql": { type: "boolean", default: false },
      engines: { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const mode = values.smoke ? "smoke" : values.quick ? "quick" : "full";
  const list = <T extends string>(value: string | undefined, known: readonly T[], what: string): T[] => {
    if (value === undefined) return [...known];
    const picked = value.split(",").map((v) => v.trim());
    for (const p of picked) if (!known.includes(p as T)) throw new Error(`unknown ${what} "${p}"; known: ${known.join(", ")}`);
    return picked as T[];
  };
  if (!values.scale && (values["scale-users"] !== undefined || values["scale-reseed"])) throw new Error("--scale-users and --scale-reseed go with --scale");
  const scale = values.scale ? { users: values["scale-users"] === undefined ? DEFAULT_SCALE_USERS : parseUserCount(values["scale-users"]), reseed: values["scale-reseed"] } : undefined;
  const allScenarios = SCENARIOS.map((s) => s.id);
  // The scale seed is written through the SQLite store: `--scale` runs SQLite only.
  const engines = values.engines === undefined ? (scale ? (["sqlite"] as Engine[]) : [...ENGINES]) : list(values.engines, ENGINES, "engine");
  if (scale && engines.includes("postgres")) throw new Error("--scale seeds a SQLite data dir: it runs with --engines sqlite only");
  const protocols = values.protocols === undefined && scale ? [...SCALE_PROTOCOLS] : list(values.protocols, PROTOCOLS, "protocol");
  const scenarios =
    values.scenarios === undefined
      ? scale
        ? SCALE_SCENARIOS.filter((id) => allScenarios.includes(id))
        : SCENARIOS.filter((s) => !s.scaleOnly).map((s) => s.id)
      : list(values.scenarios, allScenarios, "scenario");
  const { postgresRun, ...modeOptions } = MODES[mode];
  return {
    mode,
    ...modeOptions,
    // The scale run compares saturated rates: the paced runs (p99 target) stay with the plain runs.
    // Both databases' servers get the warm-up (quick leaves it out otherwise): a cold first run would favour the scaled side.
    ...(scale ? { half: { ...MODES[mode].half, scenarios: "none" as const }, serverWarmUp: true } : {}),
    enforce: values.enforce,
    keep: values.keep,
    traceSql: values["trace-sql"],
    protocols,
    scenarios,
    engines,
    postgres: {
      scenarios: values.scenarios === undefined ? POSTGRES_SCENARIOS.filter((id) => allScenarios.includes(id)) : scenarios,
      protocols: values.protocols === undefined ? [...POSTGRES_PROTOCOLS] : protocols,
      replicas: [...POSTGRES_REPLICAS],
      ...postgresRun,
    },
    ...(scale ? { scale } : {}),
  };
}
