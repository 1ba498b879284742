/**
 * `npm run bench`: the framework ceiling (bench/servers/bare-server.ts) and Gatehouse on a fresh data
 * dir, driven by external load generators in their own processes (wrk for HTTP/1.1, bench/load/h2c-load.c
 * for h2c, h2load as a cross-check), one table on stdout and the same as JSON under bench/results/.
 * See bench/README.md for what each scenario does and how the ratios are made.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { gatehouseArgon2Options } from "./lib/argon2-params.js";
import { buildH2cLoad, ensureLoadTools, type Measurement, runArgon2Loop, runH2c, runH2loadHealth, runWrk } from "./lib/drivers.js";
import { generatorOf, type Protocol, WRK_BLOCK, writeH2cFile, writeWrkFile, wrkHeaders } from "./lib/encode.js";
import { type BenchOptions, parseOptions, USAGE } from "./lib/options.js";
import { addRatios, evaluateTargets, formatReport, type Row, type ScaleInfo } from "./lib/report.js";
import { prepareScaleDataDir } from "./lib/scale-seed.js";
import { type BenchRequest, HEALTH, type Scenario, SCENARIOS } from "./lib/scenarios.js";
import { type BenchServer, REPO, snapshotCode, startBare, startGatehouse } from "./lib/servers.js";
import { createWorld, type World } from "./lib/setup.js";

let options: BenchOptions;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).message}\n${USAGE}\n`);
  process.exit(2);
}

const cores = os.availableParallelism();
const wrkThreads = Math.max(1, Math.min(cores, options.connections));
const workDir = mkdtempSync(join(os.tmpdir(), "gatehouse-bench-"));
const rows: Row[] = [];
const startedAt = new Date();
const loadAtStart = os.loadavg();
const log = (line: string) => process.stderr.write(`bench: [${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
let fileSerial = 0;
let h2cLoad = "";

/** Rates measured so far, to size the request sequences of later runs (never to compute a figure). */
const bareRate = new Map<string, number>();
const noopRate = new Map<string, number>();
const writeRate = new Map<string, number>();
let hashRate: number | undefined;

const roundUp = (value: number, step: number) => Math.max(step, Math.ceil(value / step) * step);

interface RunPlan {
  connections: number;
  warmupS: number;
  seconds: number;
  /** Total rate to pace to (the half-saturation runs). */
  rate?: number;
  /** Expected rate, for the length of the sequence. */
  sizeRate: number;
  sizeFactor: number;
  /** `--scale`: which database the server runs on. */
  database?: Row["database"];
}

/**
 * Waits until the server answers at once again: calls still running from the previous run (a generator's closed
 * connections do not stop what the server already started, and a synchronous query of seconds holds the event loop)
 * must not fall into the next run's window. Up to two minutes, then the run starts anyway (and says so).
 */
async function settle(server: BenchServer): Promise<void> {
  const deadline = Date.now() + 120_000;
  let waited = false;
  while (Date.now() < deadline) {
    const started = Date.now();
    // Any answer will do (the bare server has no /readyz): what counts is how soon it comes.
    const ok = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(5_000) }).then(
      async (response) => {
        await response.arrayBuffer();
        return true;
      },
      () => false,
    );
    if (ok && Date.now() - started < 50) {
      if (waited) log(`${server.name} idle again after ${((Date.now() - settleStarted) / 1000).toFixed(1)} s`);
      return;
    }
    if (!waited) settleStarted = started;
    waited = true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  log(`${server.name} still busy after 120 s: the run starts anyway`);
}
let settleStarted = 0;

/** One load run of `scenario` on `protocol` against `server`: warm-up, then the measured window. */
async function measure(server: BenchServer, scenario: Scenario, protocol: Protocol, world: World | undefined, token: string, plan: RunPlan, keep = true): Promise<Row> {
  const generator = generatorOf(protocol);
  const size = (seconds: number) => (scenario.repeats ? 4 * WRK_BLOCK : Math.ceil(plan.sizeRate * seconds * plan.sizeFactor) + 2 * WRK_BLOCK);
  const prepare = async (count: number): Promise<BenchRequest[]> => {
    const started = Date.now();
    const requests = await scenario.requests(world as World, count);
    if (Date.now() - started > 1000) log(`prepared ${count} requests of ${scenario.id} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return requests;
  };
  await settle(server);
  let measurement: Measurement;
  let rssPerRun = false;
  if (generator === "wrk") {
    // wrk deals lines to its threads in blocks: both files hold whole rounds of blocks.
    const round = WRK_BLOCK * wrkThreads;
    const warmCount = roundUp(size(options.warmupS), round);
    const requests = await prepare(warmCount + roundUp(size(plan.seconds), round));
    const warmFile = join(workDir, `req-${fileSerial++}.txt`);
    const file = join(workDir, `req-${fileSerial++}.txt`);
    writeWrkFile(warmFile, requests.slice(0, warmCount));
    writeWrkFile(file, requests.slice(warmCount));
    const common = { url: server.url, headers: wrkHeaders(token), connections: plan.connections, threads: wrkThreads, ...(plan.rate ? { rate: plan.rate } : {}) };
    rssPerRun = server.resetPeakRss();
    await runWrk({ ...common, file: warmFile, seconds: plan.warmupS });
    await server.takeSqlTrace?.();
    measurement = await runWrk({ ...common, file, seconds: plan.seconds });
  } else {
    const requests = await prepare(size(plan.warmupS + plan.seconds));
    const file = join(workDir, `req-${fileSerial++}.txt`);
    writeH2cFile(file, requests, protocol as Exclude<Protocol, "connect-json-http1">, token);
    rssPerRun = server.resetPeakRss();
    await server.takeSqlTrace?.();
    measurement = await runH2c({
      binary: h2cLoad,
      url: server.url,
      protocol: protocol === "grpc-h2c" ? "grpc" : "connect",
      file,
      connections: plan.connections,
      warmupMs: plan.warmupS * 1000,
      durationMs: plan.seconds * 1000,
      ...(plan.rate ? { rate: plan.rate } : {}),
    });
  }
  // wrk's warm-up is a run of its own, left out; h2c-load's is inside its run, so counted too.
  const sql = await server.takeSqlTrace?.();
  const row: Row = {
    ...(sql ? { sql: { entries: sql.sort((a, b) => b.totalMs - a.totalMs), includesWarmUp: generator !== "wrk" } } : {}),
    scenario: scenario.id,
    title: scenario.title,
    protocol,
    server: server.name,
    generator,
    connections: plan.connections,
    repeats: scenario.repeats === true,
    measurement,
    peakRssMb: server.peakRssMb(),
    peakRssScope: rssPerRun ? "run" : "process",
    ...(plan.rate ? { pacedRate: plan.rate } : {}),
    ...(plan.database ? { database: plan.database } : {}),
  };
  if (!keep) return row;
  log(`${server.name}${plan.database === "scaled" ? " (scaled)" : ""} ${scenario.id} ${protocol}${plan.rate ? ` paced ${plan.rate.toFixed(0)}/s` : ""}: ${measurement.rps.toFixed(0)} req/s, p99 ${measurement.p99Ms.toFixed(2)} ms${measurement.unexpected ? `, ${measurement.unexpected} unexpected` : ""}`);
  rows.push(row);
  return row;
}

const basePlan = { connections: options.connections, warmupS: options.warmupS, seconds: options.seconds };
const selected = SCENARIOS.filter((s) => options.scenarios.includes(s.id));
const wantsHealth = options.scenarios.includes("health");
const wantsH2load = wantsHealth && options.protocols.includes("grpc-h2c") && !options.scale;
const servers: BenchServer[] = [];
let scaleInfo: ScaleInfo | undefined;

/** The commit the servers' code was copied at, and a digest of the uncommitted changes of src, gen and package.json. */
function codeState(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: REPO, encoding: "utf8" }).trim();
    const changes = execFileSync("git", ["diff", "HEAD", "--", "src", "gen", "package.json"], { cwd: REPO, encoding: "utf8", maxBuffer: 256 * 2 ** 20 });
    return `${head.slice(0, 12)}${changes ? `+${createHash("sha256").update(changes).digest("hex").slice(0, 8)}` : ""}`;
  } catch {
    return "unknown";
  }
}
let code = "";

/**
 * A fresh server's first calls run cold code (JIT, lazy modules, first connections). Before anything is
 * measured, each server gets Health/Check (and Gatehouse also GetProject) on every protocol, unrecorded.
 */
async function warmUp(server: BenchServer, token: string, world?: World): Promise<void> {
  if (!options.serverWarmUp) return;
  const getProject = SCENARIOS.find((s) => s.id === "get-project")!;
  for (const protocol of options.protocols) {
    for (const scenario of world ? [HEALTH, getProject] : [HEALTH]) {
      await measure(server, scenario, protocol, world, token, { connections: options.connections, warmupS: options.warmupS, seconds: 1, sizeRate: 0, sizeFactor: 1 }, false);
    }
  }
  log(`${server.name} warmed up`);
}

/**
 * Gatehouse on `dataDir` (fresh, or seeded by `--scale`): the world the scenarios need, made through its API, the
 * server's warm-up, then every selected scenario on every protocol, one after the other.
 */
async function runGatehouse(dataDir: string, database: Row["database"]): Promise<void> {
  const gatehouse = await startGatehouse(
    dataDir,
    options.keep ? join(workDir, database === "scaled" ? "gatehouse-scaled.log" : "gatehouse.log") : undefined,
    options.traceSql ? join(workDir, "sql-trace.json") : undefined,
  );
  servers.push(gatehouse);
  log(`gatehouse started${database ? ` on the ${database} database` : ""}`);
  const world = await createWorld(gatehouse.url, gatehouse.token);
  await warmUp(gatehouse, gatehouse.token, world);
  for (const scenario of selected) {
    for (const protocol of options.protocols) {
      // Sequences are sized from what was measured before: writes that need no pool from the bare
      // ceiling (nothing beats it, and a long sequence costs little), pooled ones (users and codes made
      // through the API, which takes time) from UpdateApplication's rate on the same protocol.
      const ceiling = Math.max(bareRate.get(protocol) ?? 0, noopRate.get(protocol) ?? 0) || 5_000;
      const write = writeRate.get(protocol) ?? ceiling / 3;
      const sizeRate = scenario.pooled ? write : scenario.id === "create-user-password" && hashRate ? hashRate * 2 : ceiling;
      const row = await measure(gatehouse, scenario, protocol, world, gatehouse.token, { ...basePlan, sizeRate, sizeFactor: scenario.pooled ? 1.3 : 1.5, database });
      // The scaled database's rates size nothing: a slower run there must not shorten the sequences (max).
      if (scenario.id === "health") noopRate.set(protocol, Math.max(noopRate.get(protocol) ?? 0, row.measurement.rps));
      if (scenario.id === "update-application") writeRate.set(protocol, Math.max(writeRate.get(protocol) ?? 0, row.measurement.rps));
      const halfRate = row.measurement.rps / 2;
      if (scenario.durableWrite && (options.half.scenarios === "all" || options.half.scenarios === scenario.id) && halfRate > 0) {
        await measure(gatehouse, scenario, protocol, world, gatehouse.token, {
          connections: options.connections,
          warmupS: options.half.warmupS,
          seconds: options.half.seconds,
          rate: halfRate,
          sizeRate: halfRate,
          sizeFactor: 1.2,
          database,
        });
      }
    }
    if (scenario.id === "health" && wantsH2load) await crossCheckWithH2load(gatehouse, gatehouse.token);
  }
  await gatehouse.stop();
}

async function crossCheckWithH2load(server: BenchServer, token: string): Promise<void> {
  const rssPerRun = server.resetPeakRss();
  const measurement = await runH2loadHealth({ url: server.url, token, connections: options.connections, warmupS: options.warmupS, seconds: options.seconds, workDir });
  rows.push({ scenario: "health", title: HEALTH.title, protocol: "grpc-h2c", server: server.name, generator: "h2load", connections: options.connections, repeats: true, measurement, peakRssMb: server.peakRssMb(), peakRssScope: rssPerRun ? "run" : "process" });
  log(`${server.name} health grpc-h2c (h2load): ${measurement.rps.toFixed(0)} req/s`);
}

try {
  // Every server of the run runs this copy, whatever is committed or edited in the tree meanwhile.
  code = codeState();
  snapshotCode(workDir);
  ensureLoadTools();
  h2cLoad = buildH2cLoad(workDir);

  // 1. The framework ceiling, alone on the machine (`--scale` compares Gatehouse with itself, so it needs none).
  if (wantsHealth && !options.scale) {
    const bare = await startBare();
    servers.push(bare);
    await warmUp(bare, "bench");
    for (const protocol of options.protocols) {
      const row = await measure(bare, HEALTH, protocol, undefined, "bench", { ...basePlan, sizeRate: 0, sizeFactor: 1 });
      bareRate.set(protocol, row.measurement.rps);
    }
    if (wantsH2load) await crossCheckWithH2load(bare, "bench");
    await bare.stop();
  }

  // 2. The argon2id ceiling, alone on the machine.
  if (options.scenarios.includes("create-user-password")) {
    const argon2 = gatehouseArgon2Options();
    const measurement = await runArgon2Loop({ concurrency: options.connections, warmupMs: options.warmupS * 1000, durationMs: options.seconds * 1000, argon2 });
    hashRate = measurement.rps;
    rows.push({ scenario: "argon2-loop", title: `argon2id loop (m=${argon2.memoryCost} KiB, t=${argon2.timeCost}, p=${argon2.parallelism})`, protocol: "-", server: "argon2-loop", generator: "argon2-loop", connections: options.connections, repeats: true, measurement });
    log(`argon2id loop: ${measurement.rps.toFixed(1)} hashes/s`);
  }

  // 3. `--scale`: the seeded data dir is made first (seeded, or copied from the cache), so that the two sides run
  // minutes apart, not a seed apart, on a machine whose load drifts.
  let scaleDir: string | undefined;
  if (options.scale) {
    scaleDir = join(workDir, "data-scale");
    const prepared = await prepareScaleDataDir(scaleDir, options.scale.users, {
      useCache: !options.scale.reseed,
      log,
      // A first start bootstraps it (instance, admin, admin.pat) like any new data dir; the seed follows.
      bootstrap: async (dir) => {
        const server = await startGatehouse(dir);
        await server.stop();
      },
    });
    const { summary } = prepared;
    scaleInfo = {
      users: summary.users,
      organizations: summary.organizations,
      memberships: summary.memberships,
      events: summary.events,
      seedSeconds: summary.seconds,
      cached: prepared.cached,
      prepareSeconds: prepared.seconds,
      databaseMb: summary.databaseMb,
      seederPeakRssMb: summary.seederPeakRssMb,
    };
  }

  // 4. Gatehouse on a fresh data dir; what the scenarios need is made through its API. Then, with `--scale`, the
  // same on the seeded one.
  await runGatehouse(join(workDir, "data"), options.scale ? "empty" : undefined);
  if (scaleDir) await runGatehouse(scaleDir, "scaled");
} finally {
  for (const server of servers) await server.stop();
  if (!options.keep) rmSync(workDir, { recursive: true, force: true });
  else log(`kept ${workDir}`);
}

addRatios(rows);
const targets = evaluateTargets(rows);
process.stdout.write(`${formatReport(rows, targets, options, cores, scaleInfo)}\n`);

const resultsDir = join(REPO, "bench", "results");
mkdirSync(resultsDir, { recursive: true });
const resultFile = join(resultsDir, `${startedAt.toISOString().replaceAll(":", "-").replace(/\.\d+Z$/, "Z")}-${options.mode}${options.scale ? "-scale" : ""}.json`);
let commit = "";
try {
  commit = execFileSync("git", ["rev-parse", "HEAD"], { cwd: REPO, encoding: "utf8" }).trim();
} catch {
  // not a checkout
}
writeFileSync(
  resultFile,
  `${JSON.stringify(
    {
      date: startedAt.toISOString(),
      mode: options.mode,
      commit,
      machine: { cores, cpu: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, loadAverageAtStart: loadAtStart, loadAverageAtEnd: os.loadavg() },
      options,
      ...(scaleInfo ? { scale: scaleInfo } : {}),
      code,
      rows,
      targets,
    },
    null,
    2,
  )}\n`,
);
process.stdout.write(`\nwritten to ${resultFile.slice(REPO.length)}\n`);
const failed = targets.filter((t) => !t.pass).length;
if (failed > 0) process.stdout.write(`${failed} target(s) failed${options.enforce ? "" : " (not enforced: exit 0; --enforce makes it exit 1)"}\n`);
// Unexpected answers mean the bench (or the server) is broken, which no noise explains: always a failure.
const broken = targets.some((t) => t.integrity && !t.pass);
if (broken) process.stdout.write("the run is not valid: some answers were not the expected ones (see the integrity line)\n");
process.exit(broken || (options.enforce && failed > 0) ? 1 : 0);
