/**
 * `npm run bench -- --import`: the bulk import of issue 14, measured as an operator runs it — `gatehouse import FILE`
 * (the compiled CLI, its own process) against a compiled Gatehouse on a fresh SQLite data dir with every default
 * (`synchronous=FULL`: every chunk durable before it is answered), both on this machine. Two files:
 *
 * 1. users with imported bcrypt hashes (the migration case): users/s end to end, the server's and the client's peak
 *    RSS, and the server's RSS along the way (flat, whatever the file size);
 * 2. users with plain passwords, next to argon2id alone here (as many hashes in flight as cores, right before and
 *    after): by rate, and by CPU time per hash, which a shared machine's load does not move.
 *
 * Then the database is opened and every user counted (the integrity check). One table on stdout, the same as JSON in
 * bench/results/<date>-import.json.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { gatehouseArgon2Options } from "./argon2-params.js";
import { profiling, REPO, snapshotCode, startGatehouse } from "./servers.js";

export const IMPORT_USAGE = `npm run bench -- --import [--smoke | --quick] [--import-users N] [--import-plain N] [--import-batch N] [--import-node-options="…"] [--keep]
  --import-users N    users with bcrypt hashes (default 1 000 000; --quick 100 000; --smoke 5 000)
  --import-plain N    users with plain passwords (default 2 000; --quick 1 000; --smoke 100)
  --import-batch N    users per request message (the command's --batch-size; default 1000)
  --import-node-options="…"  NODE_OPTIONS for the server and the command, e.g. "--max-old-space-size=160
                      --max-semi-space-size=32" (default: none, Node's own heap sizing, which on a machine with
                      plenty of memory lets garbage pile up before it collects it: bench/README.md)`;

interface ImportRun {
  file: "bcrypt hashes" | "plain passwords";
  users: number;
  seconds: number;
  /** Users per second over the whole command (its start, the row count, the import, the summary). */
  usersPerSecond: number;
  /** What the command itself reported (the import alone, from its first row). */
  reportedUsersPerSecond: number;
  serverPeakRssMb: number;
  clientPeakRssMb: number;
  /** The server's and the command's RSS every tenth of the run, MB. */
  serverRssMb: number[];
  clientRssMb: number[];
  /** CPU time (user + system, every thread) per user imported, µs: less sensitive to a busy machine than users/s. */
  serverCpuMicrosPerUser: number;
  clientCpuMicrosPerUser: number;
  stored: number;
}

const BASE64 = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const randomText = (length: number) => Array.from(randomBytes(length), (b) => BASE64[b & 63]).join("");

/** An import file of `users` rows, written as a stream; each user its own bcrypt hash (random, well-formed) or password. */
async function writeImportFile(path: string, users: number, prefix: string, secret: "hash" | "password"): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < users; i++) {
    const name = `${prefix}${i}`;
    const credential = secret === "hash" ? `"hashedPassword":{"value":"$2b$10$${randomText(53)}"}` : `"password":"Pw-${randomText(12)}-9a!"`;
    const line = `{"userName":"${name}","profile":{"firstName":"First","lastName":"Last ${i}"},"email":{"email":"${name}@example.com","isEmailVerified":true},${credential},"externalId":"src-${i}"}\n`;
    if (!out.write(line)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}

/** User + system CPU seconds a process has used so far (/proc/<pid>/stat, clock ticks of 1/100 s). */
const cpuSecondsOf = (pid: number) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
};

const rssOf = (pid: number, field: "VmRSS" | "VmHWM") => {
  try {
    const kb = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : 0;
  } catch {
    return 0;
  }
};

/** Runs `gatehouse import` to its end, sampling both processes' memory. */
async function runImportCommand(code: string, server: { url: string; pid: number }, dataDir: string, file: string, users: number, label: ImportRun["file"], batchSize: number) {
  const started = performance.now();
  const child = spawn(process.execPath, [...profiling(), "dist/src/main.js", "import", file, "--url", server.url, "--token-file", join(dataDir, "admin.pat"), "--batch-size", String(batchSize)], {
    cwd: code,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  const samples: { at: number; rss: number; client: number }[] = [];
  let clientPeak = 0;
  let clientCpu = 0;
  const serverCpuBefore = cpuSecondsOf(server.pid);
  const sampler = setInterval(() => {
    samples.push({ at: performance.now() - started, rss: rssOf(server.pid, "VmRSS"), client: rssOf(child.pid!, "VmRSS") });
    clientPeak = Math.max(clientPeak, rssOf(child.pid!, "VmHWM"));
    clientCpu = Math.max(clientCpu, cpuSecondsOf(child.pid!));
  }, 250);
  const [exitCode] = (await once(child, "exit")) as [number | null];
  clearInterval(sampler);
  const serverCpu = cpuSecondsOf(server.pid) - serverCpuBefore;
  const seconds = (performance.now() - started) / 1000;
  if (exitCode !== 0) throw new Error(`gatehouse import exited with ${exitCode}:\n${stdout}`);
  const reported = Number(/\(([\d,]+) users\/s\)/.exec(stdout)?.[1]?.replaceAll(",", "") ?? Number.NaN);
  const tenth = (i: number) => samples.filter((s) => s.at <= ((i + 1) * seconds * 1000) / 10).at(-1);
  const tenths = Array.from({ length: 10 }, (_, i) => tenth(i)?.rss ?? 0);
  const clientTenths = Array.from({ length: 10 }, (_, i) => tenth(i)?.client ?? 0);
  return {
    file: label,
    users,
    seconds,
    usersPerSecond: users / seconds,
    reportedUsersPerSecond: reported,
    clientPeakRssMb: clientPeak,
    serverRssMb: tenths.map(Math.round),
    clientRssMb: clientTenths.map(Math.round),
    serverCpuMicrosPerUser: (serverCpu * 1e6) / users,
    // Sampled until its last quarter second: a little short.
    clientCpuMicrosPerUser: (clientCpu * 1e6) / users,
  };
}

function countUsers(dataDir: string, prefix: string): number {
  const db = new Database(join(dataDir, "gatehouse.db"), { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM users WHERE user_name LIKE ?").get(`${prefix}%`) as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * argon2id alone, in this process: `concurrency` hashes in flight (on libuv's threads, as Gatehouse hashes) for
 * `durationMs`, with Gatehouse's parameters. Its rate, and the CPU time (all threads) one hash takes.
 */
async function argon2Ceiling(concurrency: number, durationMs: number, argon2: Record<string, number>) {
  const { hash } = await import("@node-rs/argon2");
  await hash("warm-up", argon2);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let hashes = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() - started < durationMs) {
        await hash(`Password-${hashes}`, argon2);
        hashes++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  return { hashesPerSecond: hashes / ((performance.now() - started) / 1000), cpuMsPerHash: (cpu.user + cpu.system) / 1000 / hashes };
}

/** The plain passwords' import next to argon2id alone: by rate (drifts with the machine's load) and by CPU per hash. */
function plainPasswordLine(run: ImportRun | undefined, ceilings: { hashesPerSecond: number; cpuMsPerHash: number }[]): string {
  if (!run || ceilings.length === 0) return "";
  const bestRate = Math.max(...ceilings.map((c) => c.hashesPerSecond));
  const cheapest = Math.min(...ceilings.map((c) => c.cpuMsPerHash));
  const serverMsPerUser = run.serverCpuMicrosPerUser / 1000;
  return (
    `argon2id alone here: ${ceilings.map((c) => `${c.hashesPerSecond.toFixed(1)} hashes/s at ${c.cpuMsPerHash.toFixed(1)} ms of CPU each`).join(", then ")}; ` +
    `the plain passwords' import: ${run.reportedUsersPerSecond} users/s (${((100 * run.reportedUsersPerSecond) / bestRate).toFixed(0)} % of the better rate), ` +
    `${serverMsPerUser.toFixed(1)} ms of server CPU per user (${((100 * cheapest) / serverMsPerUser).toFixed(0)} % of argon2id's efficiency)`
  );
}

export async function runImportBench(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv.filter((arg) => arg !== "--import"),
      options: {
        smoke: { type: "boolean" },
        quick: { type: "boolean" },
        "import-users": { type: "string" },
        "import-plain": { type: "string" },
        "import-node-options": { type: "string" },
        "import-batch": { type: "string" },
        keep: { type: "boolean" },
      },
    }));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n${IMPORT_USAGE}\n`);
    return 2;
  }
  const nodeOptions = values["import-node-options"] ?? "";
  const batchSize = Number(values["import-batch"] ?? 1000);
  const mode = values.smoke ? "smoke" : values.quick ? "quick" : "full";
  const hashed = Number(values["import-users"] ?? { full: 1_000_000, quick: 100_000, smoke: 5_000 }[mode]);
  const plain = Number(values["import-plain"] ?? { full: 2_000, quick: 1_000, smoke: 100 }[mode]);
  const cores = os.availableParallelism();
  const log = (line: string) => process.stderr.write(`bench import: ${line}\n`);
  const workDir = mkdtempSync(join(os.tmpdir(), "gatehouse-bench-import-"));
  const startedAt = new Date();
  const loadAtStart = os.loadavg();
  const runs: ImportRun[] = [];
  const ceilings: { hashesPerSecond: number; cpuMsPerHash: number }[] = [];
  try {
    const code = snapshotCode(workDir);
    // The server (startGatehouse passes the bench's environment on) and the command get the Node options; the build
    // above and the bench itself do not.
    if (nodeOptions) process.env["NODE_OPTIONS"] = nodeOptions;
    const argon2 = gatehouseArgon2Options();
    // argon2id's ceiling alone on the machine, right before and right after the plain passwords' import (a shared
    // machine's load drifts): hashes per second with one in flight per core, and the CPU time one hash takes — the
    // figure the import is compared by, since CPU time per hash does not depend on who else uses the machine.
    const measureCeiling = async () => {
      const ceiling = await argon2Ceiling(cores, mode === "smoke" ? 2000 : 5000, argon2);
      log(`argon2id ceiling: ${ceiling.hashesPerSecond.toFixed(1)} hashes/s with ${cores} in flight, ${ceiling.cpuMsPerHash.toFixed(1)} ms of CPU per hash`);
      ceilings.push(ceiling);
    };
    for (const [label, users, prefix, secret] of [
      ["bcrypt hashes", hashed, "hashed-", "hash"],
      ["plain passwords", plain, "plain-", "password"],
    ] as const) {
      const file = join(workDir, `${prefix}users.jsonl`);
      await writeImportFile(file, users, prefix, secret);
      const dataDir = join(workDir, `data-${prefix.slice(0, -1)}`);
      if (secret === "password") await measureCeiling();
      const server = await startGatehouse(dataDir);
      try {
        log(`importing ${users} users with ${label}`);
        const run = await runImportCommand(code, server, dataDir, file, users, label, batchSize);
        const serverPeakRssMb = server.peakRssMb();
        await server.stop();
        runs.push({ ...run, serverPeakRssMb, stored: countUsers(dataDir, prefix) });
        log(`${label}: ${run.usersPerSecond.toFixed(0)} users/s (the command says ${run.reportedUsersPerSecond}), server peak ${serverPeakRssMb} MB, client peak ${run.clientPeakRssMb.toFixed(0)} MB`);
      } finally {
        await server.stop();
      }
      rmSync(file, { force: true });
      if (secret === "password") await measureCeiling();
    }
  } finally {
    if (!values.keep) rmSync(workDir, { recursive: true, force: true });
    else log(`kept ${workDir}`);
  }

  const lines = [
    `Bulk import (gatehouse import → ImportHumanUsers), SQLite synchronous=FULL, ${batchSize} users per message, ${nodeOptions ? `NODE_OPTIONS="${nodeOptions}"` : "Node's default heap"}, ${cores} cores (${os.cpus()[0]?.model ?? "?"}), load ${loadAtStart.map((l) => l.toFixed(1)).join(" ")} → ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
    "| file | users | seconds | users/s (command) | users/s (import) | server CPU µs/user | client CPU µs/user | server peak RSS | server RSS by tenths (MB) | client peak RSS | client RSS by tenths (MB) | stored |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|",
    ...runs.map(
      (r) =>
        `| ${r.file} | ${r.users} | ${r.seconds.toFixed(1)} | ${r.usersPerSecond.toFixed(0)} | ${r.reportedUsersPerSecond} | ${r.serverCpuMicrosPerUser.toFixed(0)} | ${r.clientCpuMicrosPerUser.toFixed(0)} | ${r.serverPeakRssMb} MB | ${r.serverRssMb.join(" ")} | ${r.clientPeakRssMb.toFixed(0)} MB | ${r.clientRssMb.join(" ")} | ${r.stored} |`,
    ),
    plainPasswordLine(runs.find((r) => r.file === "plain passwords"), ceilings),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  const resultsDir = join(REPO, "bench", "results");
  mkdirSync(resultsDir, { recursive: true });
  const resultFile = join(resultsDir, `${startedAt.toISOString().replaceAll(":", "-").replace(/\.\d+Z$/, "Z")}-import-${mode}.json`);
  writeFileSync(resultFile, `${JSON.stringify({ date: startedAt.toISOString(), mode, nodeOptions, batchSize, machine: { cores, cpu: os.cpus()[0]?.model, loadAverageAtStart: loadAtStart, loadAverageAtEnd: os.loadavg() }, argon2Ceilings: ceilings, runs }, null, 2)}\n`);
  process.stdout.write(`written to ${resultFile.slice(REPO.length)}\n`);
  // Integrity: every user of each file is in the database, once.
  const broken = runs.filter((r) => r.stored !== r.users);
  for (const run of broken) process.stdout.write(`INTEGRITY: ${run.file}: ${run.stored} users stored of ${run.users}\n`);
  return broken.length > 0 ? 1 : 0;
}
