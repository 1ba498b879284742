import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./servers.js";

/** What one load run measured (only the measured window: never the warm-up). */
export interface Measurement {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers that were not what the request expected (an error for a write, a success for a wrong code), and broken calls. */
  unexpected: number;
  /** The prepared sequence ran out and started over (for writes: the same name or user again). */
  wrapped: boolean;
  /** The generator's own counters, kept in the JSON to explain an `unexpected`. */
  raw?: Record<string, unknown>;
}

const hasCommand = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0;
const hasNghttp2Headers = () => spawnSync("sh", ["-c", "test -f /usr/include/nghttp2/nghttp2.h"], { stdio: "ignore" }).status === 0;

/**
 * Installs what the load generators need from Debian when missing (root, as in CI): wrk,
 * nghttp2-client (h2load), and gcc with libnghttp2-dev to build bench/load/h2c-load.c.
 */
export function ensureLoadTools(): void {
  if (hasCommand("wrk") && hasCommand("h2load") && hasCommand("cc") && hasNghttp2Headers()) return;
  const packages = ["wrk", "nghttp2-client", "gcc", "libc6-dev", "libnghttp2-dev"];
  process.stderr.write(`bench: installing ${packages.join(", ")} with apt-get\n`);
  const install = () => spawnSync("apt-get", ["install", "-y", "-qq", ...packages], { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  if (install().status !== 0) {
    spawnSync("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"] });
    if (install().status !== 0) throw new Error(`could not install ${packages.join(", ")} with apt-get (root needed)`);
  }
}

/** Builds bench/load/h2c-load.c into `dir` (a second or two); returns the binary's path. */
export function buildH2cLoad(dir: string): string {
  const binary = join(dir, "h2c-load");
  const built = spawnSync("cc", ["-O2", "-o", binary, join(REPO, "bench/load/h2c-load.c"), "-lnghttp2"], { stdio: ["ignore", "ignore", "inherit"] });
  if (built.status !== 0) throw new Error("could not build bench/load/h2c-load.c");
  return binary;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited with ${code}: ${(err || out).slice(-2000)}`))));
  });
}

export interface WrkRun {
  url: string;
  headers: string[];
  file: string;
  connections: number;
  threads: number;
  seconds: number;
  /** Total request rate to pace to; 0 or absent: as fast as answered. */
  rate?: number;
}

/** wrk with bench/load/wrk-sequence.lua (wrk takes whole seconds). */
export async function runWrk(options: WrkRun): Promise<Measurement> {
  const intervalMs = options.rate ? (options.threads * 1000) / options.rate : 0;
  const args = ["-t", String(options.threads), "-c", String(options.connections), "-d", `${options.seconds}s`, "--timeout", "10s", "-s", "bench/load/wrk-sequence.lua"];
  for (const header of options.headers) args.push("-H", header);
  args.push(options.url, "--", options.file, String(options.threads), String(intervalMs));
  const out = await run("wrk", args);
  const line = out.split("\n").find((l) => l.startsWith("BENCH-JSON "));
  if (!line) throw new Error(`wrk printed no result: ${out.slice(-2000)}`);
  const r = JSON.parse(line.slice("BENCH-JSON ".length)) as {
    requests: number; durationUs: number; p50Us: number; p99Us: number; statusErrors: number; socketErrors: number; timeouts: number; issuedExpectedFailures: number; wrapped: boolean;
  };
  // wrk counts error statuses, not which request got them: compare with the number of requests sent
  // that were meant to fail. Up to one request per connection may still be in flight at the end.
  const surplus = r.statusErrors - r.issuedExpectedFailures;
  const unexpected = (surplus > 0 ? surplus : Math.max(0, -surplus - options.connections)) + r.socketErrors + r.timeouts;
  return { requests: r.requests, rps: r.requests / (r.durationUs / 1e6), p50Ms: r.p50Us / 1000, p99Ms: r.p99Us / 1000, unexpected, wrapped: r.wrapped, raw: r };
}

export interface H2cRun {
  binary: string;
  url: string;
  protocol: "grpc" | "connect";
  file: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
  rate?: number;
}

/** bench/load/h2c-load.c (Connect binary and gRPC over h2c). */
export async function runH2c(options: H2cRun): Promise<Measurement> {
  const { hostname, port } = new URL(options.url);
  const out = await run(options.binary, [hostname, port, options.protocol, String(options.connections), String(options.warmupMs), String(options.durationMs), String(options.rate ?? 0), options.file]);
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as { requests: number; rps: number; p50Ms: number; p99Ms: number; unexpected: number; wrapped: boolean };
  return { requests: r.requests, rps: r.rps, p50Ms: r.p50Ms, p99Ms: r.p99Ms, unexpected: r.unexpected, wrapped: r.wrapped, raw: r };
}

/**
 * h2load (nghttp2) on gRPC Health/Check: a cross-check of the h2c generator on the one scenario whose
 * body never changes. h2load prints no percentiles (min, max, mean, sd): p50 is left empty and p99
 * carries the mean. It does not read grpc-status, only the HTTP status.
 */
export async function runH2loadHealth(options: { url: string; token: string; connections: number; warmupS: number; seconds: number; workDir: string }): Promise<Measurement & { meanMs: number }> {
  const body = join(options.workDir, "health.grpc");
  writeFileSync(body, Buffer.alloc(5)); // an empty HealthCheckRequest, framed
  const out = await run("h2load", [
    "-c", String(options.connections), "-m", "1", "-D", String(options.seconds), `--warm-up-time=${options.warmupS}`, "-d", body,
    "-H", "content-type: application/grpc", "-H", "te: trailers", "-H", `authorization: Bearer ${options.token}`,
    `${options.url}/grpc.health.v1.Health/Check`,
  ]);
  const rps = Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(out)?.[1]);
  const requests = /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out);
  const time = /time for request:\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)\s+([\d.]+)(us|ms|s)/.exec(out);
  const toMs = (value: string, unit: string) => Number(value) * (unit === "us" ? 0.001 : unit === "s" ? 1000 : 1);
  if (!requests || !time || !Number.isFinite(rps)) throw new Error(`could not read h2load's output: ${out.slice(-2000)}`);
  const meanMs = toMs(time[5]!, time[6]!);
  return { requests: Number(requests[2]), rps, p50Ms: Number.NaN, p99Ms: Number.NaN, meanMs, unexpected: Number(requests[3]) + Number(requests[4]) + Number(requests[5]), wrapped: false };
}

/** bench/load/argon2-loop.mjs: the bare argon2id ceiling with Gatehouse's parameters. */
export async function runArgon2Loop(options: { concurrency: number; warmupMs: number; durationMs: number; argon2: Record<string, number> }): Promise<Measurement> {
  const out = await run(process.execPath, ["bench/load/argon2-loop.mjs", JSON.stringify({ concurrency: options.concurrency, warmupMs: options.warmupMs, durationMs: options.durationMs, options: options.argon2 })]);
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as { requests: number; rps: number; p50Ms: number; p99Ms: number };
  return { ...r, unexpected: 0, wrapped: false };
}
