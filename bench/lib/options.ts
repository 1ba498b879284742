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
  half: { warmupS: number; seconds: number; scenarios: "all" | "update-application" };
  /** Before its first measured run, each server gets unrecorded runs of Health/Check (and GetProject). */
  serverWarmUp: boolean;
  enforce: boolean;
  protocols: Protocol[];
  scenarios: string[];
  /** Keep the temporary dir (data dir, request files, the server's log). */
  keep: boolean;
}

const MODES = {
  // About 8.5 minutes here: 36 runs of 2 + 7 s, 12 rate-limited runs of 1 + 4 s, the servers' warm-up
  // (9 runs of 2 + 1 s), and the set-up of the users and codes the pooled scenarios use (about 1.3
  // times their run's requests, made through the API).
  full: { connections: 16, warmupS: 2, seconds: 7, half: { warmupS: 1, seconds: 4, scenarios: "all" }, serverWarmUp: true },
  // Under 2 minutes: every scenario on every protocol at full concurrency, briefly (1 + 1 s), and the
  // rate-limited run of UpdateApplication only. CI runs it so the bench cannot rot; its figures are noisy.
  quick: { connections: 16, warmupS: 1, seconds: 1, half: { warmupS: 1, seconds: 1, scenarios: "update-application" }, serverWarmUp: false },
  // Checks the harness end to end without loading a busy machine: quick's runs at 2 connections, and
  // the servers' warm-up that quick leaves out.
  smoke: { connections: 2, warmupS: 1, seconds: 1, half: { warmupS: 1, seconds: 1, scenarios: "update-application" }, serverWarmUp: true },
} as const;

export const USAGE = `npm run bench [-- --quick | --smoke] [--enforce] [--protocols a,b] [--scenarios a,b] [--keep]
  (default)   full run, about 8.5 minutes
  --quick     every scenario briefly, under 2 minutes
  --smoke     2 connections, 1-second runs: checks the harness, not the server
  --enforce   exit 1 when a target fails (otherwise the exit code is 0 whatever the figures)
  --protocols ${PROTOCOLS.join(",")}
  --scenarios ${SCENARIOS.map((s) => s.id).join(",")}
  --keep      keep the temporary data dir, request files and server log`;

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
  return {
    mode,
    ...MODES[mode],
    enforce: values.enforce,
    keep: values.keep,
    protocols: list(values.protocols, PROTOCOLS, "protocol"),
    scenarios: list(values.scenarios, SCENARIOS.map((s) => s.id), "scenario"),
  };
}
