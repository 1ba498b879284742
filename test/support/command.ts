import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";

/** The checkout: the `gatehouse` command runs from here, as `npx gatehouse` would. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export interface CommandOptions {
  /** Added to the environment (undefined removes a variable). GATEHOUSE_* of the test runner never leak in. */
  env?: Record<string, string | undefined>;
  /** Run as this user and group (the tests run as root; 65534 is `nobody`). */
  uid?: number;
  gid?: number;
}

export interface CommandResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Every child a test started and has not seen exit: killed by `killStartedCommands` in afterEach. */
const started = new Set<ChildProcess>();

/** A child process whose output is collected line by line and can be waited for. */
export class RunningCommand {
  stdout = "";
  stderr = "";
  readonly exited: Promise<CommandResult>;
  private readonly lineWaiters = new Set<() => void>();

  constructor(readonly child: ChildProcess) {
    started.add(child);
    child.stdout?.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8");
      for (const check of this.lineWaiters) check();
    });
    child.stderr?.on("data", (chunk: Buffer) => (this.stderr += chunk.toString("utf8")));
    // "close", not "exit": all output has been read by then.
    this.exited = new Promise((resolve) =>
      child.once("close", (code, signal) => {
        started.delete(child);
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      }),
    );
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** The complete lines written to stdout so far. */
  lines(): string[] {
    return this.stdout.split("\n").slice(0, -1);
  }

  /** The JSON log lines (npm's own banner lines are skipped). */
  logEntries(): Record<string, unknown>[] {
    return this.lines().flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /** The first log entry whose `msg` is `message`, waiting for it; fails if the process exits first. */
  waitForLog(message: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const entry = this.logEntries().find((e) => e.msg === message);
        if (!entry) return;
        done();
        resolve(entry);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no "${message}" log line within ${timeoutMs} ms; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.lineWaiters.delete(check);
      };
      this.lineWaiters.add(check);
      void this.exited.then((result) => {
        check();
        if (!this.lineWaiters.has(check)) return;
        done();
        reject(new Error(`exited (${result.code ?? result.signal}) before "${message}"; stderr:\n${result.stderr}`));
      });
      check();
    });
  }

  /** Waits for the exit, failing after `timeoutMs` (the child is killed then). */
  async waitForExit(timeoutMs = 30_000): Promise<CommandResult> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill("SIGKILL");
        reject(new Error(`still running after ${timeoutMs} ms; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function childEnv(extra: CommandOptions["env"] = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("GATEHOUSE_")));
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts any program in the checkout (e.g. `npm start`). */
export function spawnProgram(command: string, args: string[], options: CommandOptions = {}): RunningCommand {
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.uid !== undefined ? { uid: options.uid } : {}),
    ...(options.gid !== undefined ? { gid: options.gid } : {}),
  });
  return new RunningCommand(child);
}

/** Starts `gatehouse ARGS` from source: src/main.ts, the command's entry point, under tsx. */
export function spawnGatehouse(args: string[], options: CommandOptions = {}): RunningCommand {
  return spawnProgram(process.execPath, ["--import", "tsx", "src/main.ts", ...args], options);
}

/** Runs `gatehouse ARGS` to its end. */
export function runGatehouse(args: string[], options: CommandOptions = {}): Promise<CommandResult> {
  // Well within the test timeout, so a command that does not end (e.g. a server that should have
  // refused to start) fails the test with its output instead of a bare timeout.
  return spawnGatehouse(args, options).waitForExit(20_000);
}

export interface ServingGatehouse {
  command: RunningCommand;
  url: string;
  port: number;
}

/** Starts `gatehouse serve` on port 0 with ARGS and waits until its "gatehouse listening" line. */
export async function serveGatehouse(dataDir: string, args: string[] = [], options: CommandOptions = {}): Promise<ServingGatehouse> {
  const command = spawnGatehouse(["serve", "--port", "0", "--data-dir", dataDir, ...args], options);
  const listening = await command.waitForLog("gatehouse listening");
  const url = String(listening.url);
  return { command, url, port: Number(new URL(url).port) };
}

/** Stops a server with SIGTERM, as a supervisor does, and expects a clean exit. */
export async function stopGatehouse(server: ServingGatehouse): Promise<CommandResult> {
  server.command.child.kill("SIGTERM");
  const result = await server.command.waitForExit();
  expect(result.code).toBe(0);
  return result;
}

/**
 * Kills every child still running (a failed test must not leave servers behind). Waits for "exit",
 * not "close": a grandchild that outlived it (npm's) may still hold the output pipes open.
 */
export async function killStartedCommands(): Promise<void> {
  const children = [...started];
  started.clear();
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGKILL");
        }),
    ),
  );
}

/** A fresh temp dir (0755, so a child running as another user can reach paths under it). */
export function freshDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${prefix}-`));
  chmodSync(dir, 0o755);
  return dir;
}

/**
 * What every failure must look like: exactly one line on stderr, `gatehouse: <line>`, no stack
 * trace, and the exit code (1 failed, 2 usage).
 */
export function expectOneLineFailure(result: CommandResult, line: string, code = 1): void {
  expect(result.stderr).not.toContain("    at ");
  expect(result.stderr.split("\n").filter(Boolean)).toHaveLength(1);
  expect(result.stderr).toBe(`gatehouse: ${line}\n`);
  expect(result.code).toBe(code);
}
