#!/usr/bin/env node
import { CommanderError } from "commander";
import { type Gatehouse, startGatehouse } from "./app.js";
import { runCli } from "./cli/gatehouse.js";
import { ConfigError, loadConfig } from "./config.js";
import { describeStartupFailure } from "./startup/describe-failure.js";
import { tuneHeap } from "./startup/heap-tuning.js";

// The only module with process side effects: run the `gatehouse` command, print its outcome, and for
// `serve` stop cleanly on a signal. Failures are ONE line on stderr (what is wrong, what to do), never a
// stack trace; exit codes: 0 done, 1 failed, 2 usage.
function fail(line: string, code: number): never {
  process.stderr.write(`gatehouse: ${line}\n`);
  process.exit(code);
}

// V8's heap tuned for Gatehouse's cohorts of short-lived objects (heap-tuning.ts), before any work allocates them.
tuneHeap();

// Logs go to stdout. When whatever reads it has gone (a closed pipe), the lines are lost, but the
// server keeps serving and still stops cleanly on a signal.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
});

let outcome: Awaited<ReturnType<typeof runCli>>;
try {
  outcome = await runCli(process.argv.slice(2));
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  fail(describeStartupFailure(error), 1);
}

if (outcome.kind === "done") {
  for (const line of outcome.lines) process.stdout.write(`${line}\n`);
  process.exit(0);
}

if (outcome.kind === "run") {
  const code = await outcome.run({ stdout: process.stdout, stderr: process.stderr, onInterrupt: (listener) => process.on("SIGINT", listener) });
  process.exit(code);
}

let config;
try {
  config = loadConfig(outcome.argv);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  fail(error.message, 2);
}

// Signals are handled from before the start: one that arrives while starting (or between the
// "listening" line and here) stops the server as soon as it serves, instead of killing it undrained.
let gatehouse: Gatehouse | undefined;
let stopRequested: string | undefined;
let stopping = false;
const stop = (signal: string) => {
  if (!gatehouse) {
    stopRequested ??= signal;
    return;
  }
  if (stopping) return;
  stopping = true;
  const running = gatehouse;
  running.logger.info({ signal }, "stopping: draining in-flight calls");
  running.close().then(
    () => process.exit(0),
    (error: unknown) => {
      running.logger.error({ err: error }, "unclean stop");
      process.exit(1);
    },
  );
};
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("SIGINT", () => stop("SIGINT"));
// The terminal that started it went away: stop the same way (drained, the last log lines written), not killed.
process.on("SIGHUP", () => stop("SIGHUP"));

try {
  gatehouse = await startGatehouse({ config });
} catch (error) {
  fail(describeStartupFailure(error), 1);
}
if (stopRequested) stop(stopRequested);
