// The ceiling of CreateHumanUser with a plain password: argon2id hashes in a bare loop, in its own
// process, with the library, the parameters and the concurrency Gatehouse uses (the bench reads the
// parameters from src/commands/human-user.ts and passes them in), and nothing else.
//
//   node bench/load/argon2-loop.mjs '<json: { concurrency, warmupMs, durationMs, options }>'
//
// Prints one JSON line: hashes per second, p50 and p99 of one hash in milliseconds.
import { hash } from "@node-rs/argon2";
import { performance } from "node:perf_hooks";

const config = JSON.parse(process.argv[2]);
const latencies = [];
const startedAt = performance.now();
const measureFrom = startedAt + config.warmupMs;
const endAt = measureFrom + config.durationMs;

async function loop(worker) {
  for (let i = 0; ; i += 1) {
    const start = performance.now();
    if (start >= endAt) return;
    await hash(`Bench-Password-${worker}-${i}`, config.options);
    const done = performance.now();
    if (start >= measureFrom && done <= endAt) latencies.push(done - start);
  }
}

await Promise.all(Array.from({ length: config.concurrency }, (_, worker) => loop(worker)));
const sorted = Float64Array.from(latencies).sort();
const percentile = (q) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]);
process.stdout.write(`${JSON.stringify({ requests: sorted.length, rps: sorted.length / (config.durationMs / 1000), p50Ms: percentile(0.5), p99Ms: percentile(0.99) })}\n`);
