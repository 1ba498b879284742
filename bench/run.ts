/**
 * `npm run bench`: the framework ceiling (bench/servers/bare-server.ts), Gatehouse on a fresh SQLite data dir, then
 * on a fresh PostgreSQL database (one process, then three replicas sharing the load), driven by external load
 * generators in their own processes (wrk for HTTP/1.1, bench/load/h2c-load.c for h2c, h2load as a cross-check), one
 * table on stdout and the same as JSON under bench/results/.
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
import { runImportBench } from "./lib/import-scenario.js";
import { type BenchOptions, type Engine, parseOptions, USAGE } from "./lib/options.js";
import { type BenchPostgres, launchPostgres } from "./lib/postgres.js";
import { addRatios, evaluateTargets, formatReport, NOOP_RATIO_TARGETED, type Row, type ScaleInfo } from "./lib/report.js";
import { prepareScaleDataDir } from "./lib/scale-seed.js";
import { type BenchRequest, HEALTH, type Scenario, SCENARIOS } from "./lib/scenarios.js";
import { type BenchServer, REPO, type SharedDatabase, snapshotCode, startBare, startGatehouse } from "./lib/servers.js";
import { createWorld, type World } from "./lib/setup.js";
import { combineMeasurements, joinRuns, splitEvenly } from "./lib/spread.js";

// `--import`: the bulk import on its own (bench/lib/import-scenario.ts), instead of the load table.
if (process.argv.includes("--import")) process.exit(await runImportBench(process.argv.slice(2)));

let options: BenchOptions;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).message}\n${USAGE}\n`);
  process.exit(2);
}

const cores = os.availableParallelism();
const workDir = mkdtempSync(join(os.tmpdir(), "gatehouse-bench-"));
const rows: Row[] = [];
const startedAt = new Date();
const loadAtStart = os.loadavg();
const log = (line: string) => process.stderr.write(`bench: [${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
let fileSerial = 0;
let h2cLoad = "";

/**
 * Rates measured so far, to size the request sequences of later runs (never to compute a figure): the bare ceiling's
 * per protocol, Gatehouse's per deployment and protocol (`rateKey`).
 */
const bareRate = new Map<string, number>();
const noopRate = new Map<string, number>();
const writeRate = new Map<string, number>();
/** The fastest rate a scenario reached on this deployment so far (any protocol), keyed `<deployment>/<scenario>`. */
const scenarioRate = new Map<string, number>();
let hashRate: number | undefined;
const rateKey = (on: Deployment, protocol: Protocol) => `${on.label}/${protocol}`;
/** The least rate a sequence not made through the API is sized for (see runDeployment). */
const SIZE_FLOOR_RPS = 6_000;
/**
 * The same for pooled scenarios (users and codes made through the API first, so a long sequence costs set-up time):
 * on the first protocol a pooled scenario has no rate of its own yet, and UpdateApplication's rate, slowed by a busy
 * machine, once sized AddProjectGrantMember and VerifyEmail below what they then reached (1 121 and 922 req/s in a CI
 * run) and voided the run.
 */
const POOLED_SIZE_FLOOR_RPS = 1_500;
/**
 * On PostgreSQL the floor above is at most this many times UpdateApplication's rate on the same protocol and
 * deployment: there (about 200 req/s here) the fixed floor had AddProjectGrantMember's set-up import 21 000 partner
 * users for a run that used 1 400, 18.5 s of the full run. SQLite keeps the fixed floor, which guards against a noisy
 * UpdateApplication run there, so it must not follow that run's rate.
 */
const POOLED_SIZE_FLOOR_WRITES = 3;

/**
 * What one run loads: the bare server, or Gatehouse on one engine as one process or several replicas of one
 * database (one generator each, started together).
 */
interface Deployment {
  /** "bare", "sqlite", "postgres ×3": the rate maps' key and the log's name. */
  label: string;
  servers: BenchServer[];
  token: string;
  engine?: Engine;
  /** `--scale`: which database the server runs on. */
  database?: Row["database"];
  /** PostgreSQL's rows: the database server, whose memory each run samples. */
  postgres?: BenchPostgres;
}

const roundUp = (value: number, step: number) => Math.max(step, Math.ceil(value / step) * step);

interface RunPlan {
  connections: number;
  warmupS: number;
  seconds: number;
  /**
   * The run the ratio divides by, measured around this one (one server only): for a second right before this run and
   * a second right after it. This machine's speed moves by a factor of two within seconds (bench/README.md, "Ratios
   * and targets"), so the two sides of a ratio measured minutes apart could be measured at different speeds; around
   * each other, both sides see nearly the same ones.
   */
  reference?: Reference;
  /** Total rate to pace to (the half-saturation runs). */
  rate?: number;
  /** Expected rate, for the length of the sequence. */
  sizeRate: number;
  sizeFactor: number;
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

/** What a ratio divides by: a scenario (Health/Check) on a deployment that is up. */
interface Reference {
  on: Deployment;
  scenario: Scenario;
}

/** How long each of a reference's two runs lasts (wrk takes whole seconds). */
const REFERENCE_SECONDS = 1;

/**
 * One run of a reference, measured: no warm-up (the server has served the same calls before), the same protocol and
 * connections as the run it is a reference for. Its calls repeat (Health/Check), so one short sequence serves.
 */
async function runReference(reference: Reference, protocol: Protocol, connections: number, seconds: number): Promise<Measurement> {
  const server = reference.on.servers[0]!;
  // wrk deals whole blocks to its threads, and a thread without a line stops wrk: whole rounds of blocks, as in measure.
  const threads = Math.max(1, Math.min(cores, connections));
  const requests = await reference.scenario.requests(undefined as unknown as World, roundUp(4 * WRK_BLOCK, WRK_BLOCK * threads));
  const file = join(workDir, `req-${fileSerial++}.txt`);
  if (generatorOf(protocol) === "wrk") {
    writeWrkFile(file, requests);
    return runWrk({ url: server.url, headers: wrkHeaders(reference.on.token), connections, threads, file, seconds });
  }
  writeH2cFile(file, requests, protocol as Exclude<Protocol, "connect-json-http1">, reference.on.token);
  return runH2c({ binary: h2cLoad, url: server.url, protocol: protocol === "grpc-h2c" ? "grpc" : "connect", file, connections, warmupMs: 0, durationMs: seconds * 1000 });
}

/**
 * With several replicas a generator's sequence is sized for its share of the connections plus this margin: a replica
 * that answers faster than the others must not run out of new values.
 */
const SPREAD_MARGIN = 1.25;

/**
 * One load run of `scenario` on `protocol` against a deployment: warm-up, then the measured window. Several replicas
 * get one generator each, started together, with the connections split evenly (at least one each) and consecutive
 * slices of one prepared sequence (whole blocks of wrk-sequence.lua's, so a user's wrong and right codes stay with one
 * generator, in order).
 */
async function measure(on: Deployment, scenario: Scenario, protocol: Protocol, world: World | undefined, plan: RunPlan, keep = true): Promise<Row> {
  const generator = generatorOf(protocol);
  const replicas = on.servers.length;
  const connections = splitEvenly(Math.max(plan.connections, replicas), replicas);
  const totalConnections = connections.reduce((a, b) => a + b, 0);
  const share = (i: number) => (connections[i]! / totalConnections) * (replicas > 1 ? SPREAD_MARGIN : 1);
  const size = (seconds: number) => (scenario.repeats ? 4 * WRK_BLOCK : Math.ceil(plan.sizeRate * seconds * plan.sizeFactor) + 2 * WRK_BLOCK);
  const prepare = async (count: number): Promise<BenchRequest[]> => {
    const started = Date.now();
    const requests = await scenario.requests(world as World, count);
    if (Date.now() - started > 1000) log(`prepared ${count} requests of ${scenario.id} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return requests;
  };
  /** Consecutive slices of `requests` of these lengths. */
  const slices = (requests: BenchRequest[], lengths: number[]) => lengths.map((length, i) => requests.slice(lengths.slice(0, i).reduce((a, b) => a + b, 0)).slice(0, length));
  const resetPeaks = () => {
    on.postgres?.resetPeakMemory();
    return on.servers.map((server) => server.resetPeakRss()).every(Boolean);
  };
  const rate = (i: number) => (plan.rate ? { rate: (plan.rate * connections[i]!) / totalConnections } : {});
  const token = on.token;
  const traced = on.servers[0]!;
  for (const server of on.servers) await settle(server);
  // The reference, when the plan has one: a second of it right before this run and a second right after (one server),
  // each on an idle server, so that neither side absorbs the tail of the other's calls (a write's sync, say).
  const referenceRuns: Measurement[] = [];
  const runReferenceNow = async () => {
    if (!plan.reference) return;
    await settle(on.servers[0]!);
    referenceRuns.push(await runReference(plan.reference, protocol, plan.connections, REFERENCE_SECONDS));
    await settle(on.servers[0]!);
  };
  await runReferenceNow();
  let measurements: Measurement[];
  let rssPerRun = false;
  // wrk's runs only (its warm-up is a run of its own, so the measured run's CPU is known exactly), one server.
  let cpuUsPerRequest: number | undefined;
  if (generator === "wrk") {
    // wrk deals lines to its threads in blocks: every file holds whole rounds of blocks. A thread per core, the
    // cores shared among several generators (at least one each).
    const threads = connections.map((c) => Math.max(1, Math.min(Math.floor(cores / replicas), c)));
    const warmCounts = threads.map((t, i) => roundUp(size(plan.warmupS) * share(i), WRK_BLOCK * t));
    const runCounts = threads.map((t, i) => roundUp(size(plan.seconds) * share(i), WRK_BLOCK * t));
    const requests = await prepare([...warmCounts, ...runCounts].reduce((a, b) => a + b, 0));
    const parts = slices(requests, warmCounts.flatMap((warm, i) => [warm, runCounts[i]!]));
    const files = parts.map((part) => {
      const file = join(workDir, `req-${fileSerial++}.txt`);
      writeWrkFile(file, part);
      return file;
    });
    const wrk = (i: number, file: string, seconds: number) =>
      runWrk({ url: on.servers[i]!.url, headers: wrkHeaders(token), connections: connections[i]!, threads: threads[i]!, ...rate(i), file, seconds });
    rssPerRun = resetPeaks();
    await Promise.all(on.servers.map((_, i) => wrk(i, files[2 * i]!, plan.warmupS)));
    await traced.takeSqlTrace?.();
    const cpuBefore = on.servers.map((server) => server.cpuMs());
    measurements = await Promise.all(on.servers.map((_, i) => wrk(i, files[2 * i + 1]!, plan.seconds)));
    cpuUsPerRequest = on.servers.length === 1 && measurements[0]!.requests > 0 ? (1000 * (on.servers[0]!.cpuMs() - cpuBefore[0]!)) / measurements[0]!.requests : undefined;
  } else {
    const whole = size(plan.warmupS + plan.seconds);
    const counts = on.servers.map((_, i) => (replicas > 1 ? roundUp(whole * share(i), WRK_BLOCK) : whole));
    const requests = await prepare(counts.reduce((a, b) => a + b, 0));
    const files = slices(requests, counts).map((part) => {
      const file = join(workDir, `req-${fileSerial++}.txt`);
      writeH2cFile(file, part, protocol as Exclude<Protocol, "connect-json-http1">, token);
      return file;
    });
    rssPerRun = resetPeaks();
    await traced.takeSqlTrace?.();
    measurements = await Promise.all(
      on.servers.map((server, i) =>
        runH2c({
          binary: h2cLoad,
          url: server.url,
          protocol: protocol === "grpc-h2c" ? "grpc" : "connect",
          file: files[i]!,
          connections: connections[i]!,
          warmupMs: plan.warmupS * 1000,
          durationMs: plan.seconds * 1000,
          ...rate(i),
        }),
      ),
    );
  }
  await runReferenceNow();
  // wrk's warm-up is a run of its own, left out; h2c-load's is inside its run, so counted too.
  const sql = await traced.takeSqlTrace?.();
  const measurement = combineMeasurements(measurements);
  const peaks = on.servers.map((server) => server.peakRssMb());
  const row: Row = {
    ...(sql ? { sql: { entries: sql.sort((a, b) => b.totalMs - a.totalMs), includesWarmUp: generator !== "wrk" } } : {}),
    scenario: scenario.id,
    title: scenario.title,
    protocol,
    server: traced.name,
    generator,
    ...(on.engine ? { engine: on.engine, replicas } : {}),
    connections: totalConnections,
    repeats: scenario.repeats === true,
    measurement,
    ...(replicas > 1 ? { generators: measurements, replicaPeakRssMb: peaks } : {}),
    peakRssMb: Math.max(...peaks),
    peakRssScope: rssPerRun ? "run" : "process",
    ...(cpuUsPerRequest !== undefined ? { serverCpuUsPerRequest: cpuUsPerRequest } : {}),
    ...(on.postgres ? { postgresPeakMb: on.postgres.peakMemoryMb() } : {}),
    ...(plan.rate ? { pacedRate: plan.rate } : {}),
    windowS: plan.seconds,
    ...(plan.reference ? { reference: { server: plan.reference.on.servers[0]!.name, scenario: plan.reference.scenario.id, runsS: referenceRuns.map(() => REFERENCE_SECONDS), measurement: joinRuns(referenceRuns) } } : {}),
    ...(on.database ? { database: on.database } : {}),
  };
  if (!keep) return row;
  log(`${on.label}${on.database === "scaled" ? " (scaled)" : ""} ${scenario.id} ${protocol}${plan.rate ? ` paced ${plan.rate.toFixed(0)}/s` : ""}: ${measurement.rps.toFixed(0)} req/s, p99 ${measurement.p99Ms.toFixed(2)} ms${measurement.unexpected ? `, ${measurement.unexpected} unexpected` : ""}`);
  rows.push(row);
  return row;
}

const basePlan = { connections: options.connections, warmupS: options.warmupS, seconds: options.seconds };
/**
 * PostgreSQL's runs are shorter in the full run (options.ts, `postgresRun`): its rows have no targets, each of its
 * ratios over the no-op divides by a PostgreSQL row of the same length, and the full run's 10 minutes are tight
 * otherwise. At its rates here (100-600 req/s) a 5 s window still holds 500-3 000 calls. The one ratio across lengths
 * is its no-op's over the bare server (a 5 s window over a 7 s one, same data, concurrency and protocol).
 */
const planBaseOf = (on: Deployment) => (on.engine === "postgres" ? { ...basePlan, warmupS: options.postgres.warmupS, seconds: options.postgres.seconds } : basePlan);
const onSqlite = options.engines.includes("sqlite");
const onPostgres = options.engines.includes("postgres");
/** Each engine's scenarios and protocols: PostgreSQL's default to a subset (options.ts, `POSTGRES_SCENARIOS`). */
const plans = [
  ...(onSqlite ? [{ engine: "sqlite" as const, scenarios: options.scenarios, protocols: options.protocols }] : []),
  ...(onPostgres ? [{ engine: "postgres" as const, scenarios: options.postgres.scenarios, protocols: options.postgres.protocols }] : []),
];
const planOf = (engine: Engine) => plans.find((plan) => plan.engine === engine)!;
/** The bare ceiling runs on every protocol some engine's Health/Check runs on. */
const bareProtocols = [...new Set(plans.filter((plan) => plan.scenarios.includes("health")).flatMap((plan) => plan.protocols))];
const wantsH2load = onSqlite && options.scenarios.includes("health") && options.protocols.includes("grpc-h2c") && !options.scale;
const servers: BenchServer[] = [];
let postgres: BenchPostgres | undefined;
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
 * Ctrl-C or a kill ends the bench between two awaits, where no `finally` runs: the servers get SIGTERM, PostgreSQL
 * (a daemon of its own session, which a terminal's Ctrl-C does not reach) is stopped and removed, and so is the
 * temporary dir; then the signal ends the process as it would have.
 */
function stopEverythingNow(): void {
  for (const server of servers) server.stopNow();
  postgres?.stopNow();
  if (!options.keep) rmSync(workDir, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the servers${postgres ? " and PostgreSQL" : ""}`);
    stopEverythingNow();
    process.kill(process.pid, signal);
  });
}
// Whatever ends the process (an error thrown past the `finally`, process.exit): PostgreSQL does not outlive it.
process.once("exit", () => postgres?.stopNow());

/**
 * A fresh server's first calls run cold code (JIT, lazy modules, first connections). Before anything is
 * measured, each server gets Health/Check (and Gatehouse also GetProject) on every protocol, unrecorded.
 */
async function warmUp(on: Deployment, protocols: Protocol[], world?: World): Promise<void> {
  if (!options.serverWarmUp) return;
  const getProject = SCENARIOS.find((s) => s.id === "get-project")!;
  for (const protocol of protocols) {
    for (const scenario of world ? [HEALTH, getProject] : [HEALTH]) {
      await measure(on, scenario, protocol, world, { connections: options.connections, warmupS: 1, seconds: 1, sizeRate: 0, sizeFactor: 1 }, false);
    }
  }
  log(`${on.label} warmed up`);
}

/**
 * Gatehouse, started (one process, or replicas of one database), with the world the scenarios need: the servers'
 * warm-up, then every scenario of its engine on every protocol, one after the other.
 */
async function runDeployment(on: Deployment, world: World): Promise<void> {
  const { scenarios, protocols } = planOf(on.engine!);
  await warmUp(on, protocols, world);
  for (const scenario of SCENARIOS.filter((s) => scenarios.includes(s.id))) {
    for (const protocol of protocols) {
      // Sequences are sized from what was measured before: writes that need no pool from the bare
      // ceiling (nothing beats it, and a long sequence costs little), pooled ones (users and codes made
      // through the API, which takes time) from UpdateApplication's rate on the same protocol and deployment.
      const key = rateKey(on, protocol);
      // At least SIZE_FLOOR_RPS: the ceiling's own run can be slowed by a busy machine more than a later write run is
      // (a quick run in CI saw UpdateApplication at 2.7 times the no-op, its sequence ran out and voided the run); a
      // long sequence costs only its file.
      const ceiling = Math.max(bareRate.get(protocol) ?? 0, noopRate.get(key) ?? 0, SIZE_FLOOR_RPS);
      const write = writeRate.get(key) ?? ceiling / 3;
      // A pooled scenario can outrun UpdateApplication (VerifyEmail does when noise slowed that run): its own best
      // rate on another protocol sizes it too, so a sequence does not run out and void the run.
      const own = scenarioRate.get(`${on.label}/${scenario.id}`) ?? 0;
      const pooledFloor = on.engine === "postgres" ? Math.min(POOLED_SIZE_FLOOR_RPS, POOLED_SIZE_FLOOR_WRITES * write) : POOLED_SIZE_FLOOR_RPS;
      const sizeRate = scenario.pooled ? Math.max(write, own, pooledFloor) : scenario.id === "create-user-password" && hashRate ? hashRate * 2 : ceiling;
      const row = await measure(on, scenario, protocol, world, { ...planBaseOf(on), sizeRate, sizeFactor: 1.5, ...referenceFor(on, scenario) });
      scenarioRate.set(`${on.label}/${scenario.id}`, Math.max(own, row.measurement.rps));
      // The scaled database's rates size nothing: a slower run there must not shorten the sequences (max).
      if (scenario.id === "health") noopRate.set(key, Math.max(noopRate.get(key) ?? 0, row.measurement.rps));
      if (scenario.id === "update-application") writeRate.set(key, Math.max(writeRate.get(key) ?? 0, row.measurement.rps));
      const halfRate = row.measurement.rps / 2;
      // The rate-limited runs measure a target (p99 at half of saturation), which PostgreSQL's rows have none of: the
      // full run leaves them out there (four runs, about 22 s of it); quick and smoke keep UpdateApplication's on both
      // engines, so the harness's paced path stays checked on each.
      const pacedHere = on.engine === "sqlite" || options.half.scenarios !== "all";
      if (scenario.durableWrite && pacedHere && (options.half.scenarios === "all" || options.half.scenarios === scenario.id) && halfRate > 0) {
        await measure(on, scenario, protocol, world, {
          connections: options.connections,
          warmupS: options.half.warmupS,
          seconds: options.half.seconds,
          rate: halfRate,
          sizeRate: halfRate,
          sizeFactor: 1.2,
        });
      }
    }
    if (scenario.id === "health" && wantsH2load && on.engine === "sqlite") await crossCheckWithH2load(on.servers[0]!, on.token);
  }
}

/**
 * The reference a run's ratio is measured around: Gatehouse's no-op on the same server, for the full run's rows whose
 * ratio over the no-op has a target, on SQLite's one process (PostgreSQL's rows have no targets; `--scale` compares
 * Gatehouse with itself). The no-op's own ratio over the bare server, and every other row's, divide by the other row
 * as before: measured in turns too (tried), the bare server, idle for a minute or more by then, answered its first
 * second at half the rate of its later ones.
 */
function referenceFor(on: Deployment, scenario: Scenario): { reference?: Reference } {
  // The quick and smoke runs check the bench rather than the targets, in as little time as they can.
  if (options.mode !== "full" || on.engine !== "sqlite" || options.scale || on.servers.length > 1 || !NOOP_RATIO_TARGETED.includes(scenario.id)) return {};
  return { reference: { on, scenario: HEALTH } };
}

/** Gatehouse on a SQLite data dir (fresh, or seeded by `--scale`). */
async function runSqlite(dataDir: string, database: Row["database"]): Promise<void> {
  const gatehouse = await startGatehouse(dataDir, {
    ...(options.keep ? { logFile: join(workDir, database === "scaled" ? "gatehouse-scaled.log" : "gatehouse.log") } : {}),
    ...(options.traceSql ? { sqlTraceFile: join(workDir, "sql-trace.json") } : {}),
  });
  servers.push(gatehouse);
  log(`gatehouse started${database ? ` on the ${database} database` : ""}`);
  const world = await createWorld(gatehouse.url, gatehouse.token!);
  await runDeployment({ label: "sqlite", servers: [gatehouse], token: gatehouse.token!, engine: "sqlite", ...(database ? { database } : {}) }, world);
  await gatehouse.stop();
}

/**
 * Gatehouse on a fresh database of the run's PostgreSQL, one replica, then more on the same database: each replica
 * its own process, data dir and port, all reading the one master key file. The first starts alone, bootstraps the
 * empty database and writes admin.pat, whose token (IAM_OWNER) serves every replica; it runs the one-replica rows.
 * Then the others start together beside it (still running) and the same scenarios run on all of them, on the same
 * world: made once through the first replica, so the partner organization's pooled users serve both.
 */
async function runPostgres(pg: BenchPostgres, replicaCounts: number[]): Promise<void> {
  const database: SharedDatabase = await pg.newDatabase("gatehouse_bench");
  const start = (i: number) =>
    startGatehouse(join(workDir, `data-pg-${i + 1}`), {
      database,
      bootstraps: i === 0,
      ...(options.keep ? { logFile: join(workDir, `gatehouse-pg-${i + 1}.log`) } : {}),
    }).then((server) => {
      servers.push(server);
      return server;
    });
  const first = await start(0);
  const running: BenchServer[] = [first];
  const token = first.token!;
  const world = await createWorld(first.url, token);
  for (const count of replicaCounts) {
    if (count > running.length) running.push(...(await Promise.all(Array.from({ length: count - running.length }, (_, i) => start(running.length + i)))));
    const label = count > 1 ? `postgres ×${count}` : "postgres";
    log(`${label}: ${count} gatehouse replica${count > 1 ? "s" : ""} on one database`);
    await runDeployment({ label, servers: running.slice(0, count), token, engine: "postgres", postgres: pg }, world);
  }
  for (const server of running) await server.stop();
}

async function crossCheckWithH2load(server: BenchServer, token: string): Promise<void> {
  const rssPerRun = server.resetPeakRss();
  // A cross-check of the generator, not a figure with a target: a shorter window than the rows' (the full run's time).
  const windowS = Math.min(3, options.seconds);
  const measurement = await runH2loadHealth({ url: server.url, token, connections: options.connections, warmupS: 1, seconds: windowS, workDir });
  const engine = server.name === "gatehouse" ? { engine: "sqlite" as const, replicas: 1 } : {};
  rows.push({ scenario: "health", title: HEALTH.title, protocol: "grpc-h2c", server: server.name, generator: "h2load", ...engine, connections: options.connections, windowS, repeats: true, measurement, peakRssMb: server.peakRssMb(), peakRssScope: rssPerRun ? "run" : "process" });
  log(`${server.name} health grpc-h2c (h2load): ${measurement.rps.toFixed(0)} req/s`);
}

try {
  // Every server of the run runs this copy, whatever is committed or edited in the tree meanwhile.
  code = codeState();
  snapshotCode(workDir);
  ensureLoadTools();
  h2cLoad = buildH2cLoad(workDir);

  // 1. The framework ceiling, alone on the machine (`--scale` compares Gatehouse with itself, so it needs none).
  if (bareProtocols.length > 0 && !options.scale) {
    const bare = await startBare();
    servers.push(bare);
    const on: Deployment = { label: "bare", servers: [bare], token: "bench" };
    await warmUp(on, bareProtocols);
    for (const protocol of bareProtocols) {
      const row = await measure(on, HEALTH, protocol, undefined, { ...basePlan, sizeRate: 0, sizeFactor: 1 });
      bareRate.set(protocol, row.measurement.rps);
    }
    if (wantsH2load) await crossCheckWithH2load(bare, "bench");
    await bare.stop();
  }

  // 2. The argon2id ceiling, alone on the machine.
  if (plans.some((plan) => plan.scenarios.includes("create-user-password"))) {
    const argon2 = gatehouseArgon2Options();
    const measurement = await runArgon2Loop({ concurrency: options.connections, warmupMs: options.warmupS * 1000, durationMs: options.seconds * 1000, argon2 });
    hashRate = measurement.rps;
    rows.push({ scenario: "argon2-loop", title: `argon2id loop (m=${argon2.memoryCost} KiB, t=${argon2.timeCost}, p=${argon2.parallelism})`, protocol: "-", server: "argon2-loop", generator: "argon2-loop", connections: options.connections, windowS: options.seconds, repeats: true, measurement });
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

  // 4. Gatehouse on a fresh SQLite data dir; what the scenarios need is made through its API. Then, with `--scale`,
  // the same on the seeded one.
  if (onSqlite) {
    await runSqlite(join(workDir, "data"), options.scale ? "empty" : undefined);
    if (scaleDir) await runSqlite(scaleDir, "scaled");
  }

  // 5. PostgreSQL, started now (it idles through none of the runs above): one Gatehouse on a fresh database, then
  // two more beside it, three replicas on that one database.
  if (onPostgres) {
    const launched = await launchPostgres(workDir, options.keep ? workDir : undefined);
    postgres = launched;
    await launched.ready();
    log(`PostgreSQL 15 started (${launched.where})`);
    await runPostgres(launched, options.postgres.replicas);
    await postgres.stop();
  }
} finally {
  for (const server of servers) await server.stop();
  await postgres?.stop();
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
