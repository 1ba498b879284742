import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HealthCheckResponse_ServingStatus as ServingStatus, Health } from "../../gen/grpc/health/v1/health_pb.js";
import { dataFiles } from "../../src/config.js";
import { Clients } from "../support/clients.js";
import { freshDir, killStartedCommands, type RunningCommand, spawnProgram } from "../support/command.js";
import { eventually } from "../support/eventually.js";

// Exactly what an operator (or systemd, a container runtime, a process manager) runs and signals:
// `npm start`, and the signal goes to npm's pid only, not to a process group.
const root = freshDir("signals");
const npmPids: number[] = [];
afterEach(async () => {
  // A failed test must not leave the server behind: npm's descendants are killed by their own pids.
  const descendantsOf = (pid: number): number[] => childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
  const descendants = npmPids.splice(0).flatMap(descendantsOf);
  await killStartedCommands();
  for (const pid of descendants) if (isAlive(pid)) process.kill(pid, "SIGKILL");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeAll(async () => {
  // dist/ may be stale: build it as `npm ci` would (the prepare script), then `npm start` runs it.
  const build = await spawnProgram("npm", ["run", "build"]).waitForExit(120_000);
  expect(build.code, `npm run build failed:\n${build.stdout}${build.stderr}`).toBe(0);
}, 180_000);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids whose parent is `pid` (ps exits 1 when there are none). */
const childrenOf = (pid: number) =>
  spawnSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" }).stdout.split("\n").map((line) => Number(line.trim())).filter(Boolean);

const commandLineOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");

function connectionRefused(port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code));
  });
}

/** Polls until a connection to `port` is refused (the listener is closed). */
const refusedSoon = (port: number) =>
  eventually(async () => (await connectionRefused(port)) === "ECONNREFUSED", { what: `port ${port} to refuse connections after the stop began`, timeoutMs: 5_000 });

interface Started {
  npm: RunningCommand;
  serverPid: number;
  url: string;
  port: number;
  dataDir: string;
}

/** `npm start` on a fresh data dir; the server is npm's only child, one node process of compiled JavaScript. */
async function npmStart(name: string): Promise<Started> {
  const dataDir = join(root, name);
  const npm = spawnProgram("npm", ["start"], { env: { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: dataDir } });
  npmPids.push(npm.pid);
  const listening = await npm.waitForLog("gatehouse listening");
  const children = childrenOf(npm.pid);
  expect(children).toHaveLength(1);
  const serverPid = children[0]!;
  expect(commandLineOf(serverPid)).toBe("node dist/src/main.js serve");
  expect(childrenOf(serverPid)).toEqual([]);
  expect(readFileSync(join(dataDir, "gatehouse.lock"), "utf8").trim()).toBe(String(serverPid));
  const url = String(listening.url);
  return { npm, serverPid, url, port: Number(new URL(url).port), dataDir };
}

/** After the signal: npm exits 0, nothing is left running or listening, the stop is logged, the lock is gone. */
async function expectCleanStop(started: Started): Promise<void> {
  const result = await started.npm.waitForExit(20_000);
  expect(result.code).toBe(0);
  expect(isAlive(started.serverPid)).toBe(false);
  expect(await connectionRefused(started.port)).toBe("ECONNREFUSED");
  expect(started.npm.logEntries().map((entry) => entry.msg)).toContain("gatehouse stopped");
  expect(existsSync(join(started.dataDir, "gatehouse.lock"))).toBe(false);
}

describe("npm start hands signals to the one server process", () => {
  it("SIGTERM to npm: an HTTP/2 call whose body is still arriving completes, new connections are refused, npm exits 0", async () => {
    const started = await npmStart("sigterm");
    const token = readFileSync(dataFiles({ dataDir: started.dataDir }).adminToken, "utf8").trim();
    const session = http2.connect(started.url);
    try {
      // A PING sent before the session is connected is cancelled, not queued.
      await new Promise((resolve, reject) => session.once("connect", resolve).once("error", reject));
      const body = JSON.stringify({ name: "Created while draining" });
      const stream = session.request({
        ":method": "POST",
        ":path": "/gatehouse.admin.v1.OrganizationService/CreateOrganization",
        "content-type": "application/json",
        authorization: `Bearer ${token}`,
      });
      stream.write(body.slice(0, 5));
      const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
        let status = 0;
        let text = "";
        stream.on("response", (headers) => (status = Number(headers[":status"])));
        stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
        stream.on("end", () => resolve({ status, text }));
        stream.on("error", reject);
      });
      // The server answers a PING after the frames sent before it: the call has reached it.
      await new Promise<void>((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve())));

      process.kill(started.npm.pid, "SIGTERM");
      expect(await started.npm.waitForLog("stopping: draining in-flight calls")).toMatchObject({ signal: "SIGTERM" });
      // The line is written just before the listener closes (another process, so poll): while the
      // call is still in flight, new connections are refused.
      await refusedSoon(started.port);

      stream.end(body.slice(5));
      const answer = await response;
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toHaveProperty("organizationId");
    } finally {
      session.close();
    }
    await expectCleanStop(started);
  });

  it("SIGINT to npm: a Health.Watch stream is told NOT_SERVING and ends cleanly; npm exits 0", async () => {
    const started = await npmStart("sigint");
    const clients = new Clients(started.url);
    try {
      const statuses: ServingStatus[] = [];
      let firstUpdate: () => void = () => undefined;
      const watching = new Promise<void>((resolve) => (firstUpdate = resolve));
      const watched = (async () => {
        for await (const update of clients.client(Health, "grpc-h2c").watch({ service: "" })) {
          statuses.push(update.status);
          firstUpdate();
        }
      })();
      await watching;

      process.kill(started.npm.pid, "SIGINT");
      await watched;
      expect(statuses).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
      expect(await started.npm.waitForLog("stopping: draining in-flight calls")).toMatchObject({ signal: "SIGINT" });
    } finally {
      clients.close();
    }
    await expectCleanStop(started);
  });
});

describe("a server whose log reader has gone", () => {
  it("still stops on SIGTERM with exit 0 when the reader of its stdout has gone", async () => {
    const dataDir = join(root, "closed-stdout");
    const server = spawnProgram(process.execPath, ["dist/src/main.js", "serve", "--port", "0", "--data-dir", dataDir]);
    await server.waitForLog("gatehouse listening");
    // The pipe's reader dies (e.g. `gatehouse serve | log-shipper` and the shipper crashed).
    server.child.stdout?.destroy();
    server.child.kill("SIGTERM");
    const result = await server.waitForExit(20_000);
    expect([result.code, result.signal]).toEqual([0, null]);
    expect(existsSync(join(dataDir, "gatehouse.lock"))).toBe(false);
  });
});

describe("a server whose terminal went away (SIGHUP)", () => {
  it("stops as on SIGTERM: drained, its last log lines written, exit 0, the data dir unlocked", async () => {
    const dataDir = join(root, "hangup");
    const server = spawnProgram(process.execPath, ["dist/src/main.js", "serve", "--port", "0", "--data-dir", dataDir]);
    await server.waitForLog("gatehouse listening");
    server.child.kill("SIGHUP");
    const result = await server.waitForExit(20_000);
    expect([result.code, result.signal]).toEqual([0, null]);
    const messages = result.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; signal?: string });
    expect(messages).toContainEqual(expect.objectContaining({ msg: "stopping: draining in-flight calls", signal: "SIGHUP" }));
    expect(messages.at(-1)?.msg).toBe("gatehouse stopped");
    expect(existsSync(join(dataDir, "gatehouse.lock"))).toBe(false);
  });
});
