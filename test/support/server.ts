import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { type Gatehouse, startGatehouse } from "../../src/app.js";
import { type Config, dataFiles, loadConfig } from "../../src/config.js";
import type { Clock } from "../../src/support/clock.js";
import { Clients } from "./clients.js";
import { createTestDatabase } from "./postgres.js";
import { testCluster } from "./postgres-cluster.js";

/** A clock tests move by hand, to assert dates and expiry exactly. */
export class TestClock implements Clock {
  private offsetMs = 0;

  /**
   * Frozen at `start` by default. With `followRealTime`, it runs with the machine's clock (still
   * movable by advance): for background work such as mail retries, which wait for real time.
   */
  constructor(
    private readonly start = new Date("2026-01-01T00:00:00.000Z"),
    private readonly followRealTime = false,
  ) {}

  now(): Date {
    return new Date((this.followRealTime ? Date.now() : this.start.getTime()) + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** Every JSON log line the server wrote, for assertions that secrets never appear. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    callback();
  }
  get text(): string {
    return this.lines.join("\n");
  }
  parsed(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

export interface TestServer {
  gatehouse: Gatehouse;
  url: string;
  dataDir: string;
  adminToken: string;
  logs: LogCapture;
  clock: TestClock;
  /** Stops the server (the data dir stays for a restart). */
  stop(): Promise<void>;
  /** Stops the server and deletes its data dir. */
  dispose(): Promise<void>;
}

export interface TestServerOptions {
  dataDir?: string;
  clock?: TestClock;
  config?: Partial<Config>;
}

/** A PostgreSQL database and shared key file for a data dir: made once, found again on a restart. */
async function postgresFor(dataDir: string): Promise<Record<string, string>> {
  const marker = join(dataDir, "postgres-url");
  const keyFile = join(dataDir, "shared-master.key");
  if (!existsSync(marker)) {
    mkdirSync(dataDir, { recursive: true });
    const database = await createTestDatabase(testCluster());
    writeFileSync(marker, database.url);
    writeFileSync(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
  }
  return { GATEHOUSE_DATABASE_URL: readFileSync(marker, "utf8"), GATEHOUSE_MASTER_KEY_FILE: keyFile };
}

/** A real Gatehouse on 127.0.0.1, port 0, with a fresh data directory (or the given one, for restarts). */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "gatehouse-test-"));
  // GATEHOUSE_TEST_ENGINE=postgres: the same tests on a fresh PostgreSQL database (a restart finds its data dir's).
  const postgres = process.env["GATEHOUSE_TEST_ENGINE"] === "postgres" ? await postgresFor(dataDir) : {};
  const config: Config = {
    ...loadConfig([], { GATEHOUSE_PORT: "0", GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_DB_SYNCHRONOUS: "NORMAL", ...postgres }),
    ...options.config,
  };
  const logs = new LogCapture();
  const clock = options.clock ?? new TestClock();
  const gatehouse = await startGatehouse({ config, clock, logDestination: logs });
  const adminToken = readFileSync(dataFiles(config).adminToken, "utf8").trim();
  const stop = () => gatehouse.close();
  return {
    gatehouse,
    url: gatehouse.url,
    dataDir,
    adminToken,
    logs,
    clock,
    stop,
    async dispose() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** What a test file shares: one server and real clients for it. */
export interface ServerFixture {
  readonly server: TestServer;
  readonly clients: Clients;
}

/**
 * Starts one server (and its clients) for the whole file, and stops and deletes it afterwards. With `perTest`, each
 * test gets its own fresh server: for tests of what the first start does (the bootstrap), which must run inside the
 * test so that mutation testing attributes that code to the test that checks it.
 */
export function useTestServer(options: TestServerOptions & { perTest?: boolean } = {}): ServerFixture {
  let server: TestServer | undefined;
  let clients: Clients | undefined;
  const { perTest = false, ...serverOptions } = options;
  (perTest ? beforeEach : beforeAll)(async () => {
    server = await startTestServer(serverOptions);
    clients = new Clients(server.url);
  });
  (perTest ? afterEach : afterAll)(async () => {
    clients?.close();
    await server?.dispose();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the test server starts before the tests");
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get clients() {
      return started(clients);
    },
  };
}

/**
 * Runs `body` against a server of its own, started inside the calling test (so start-up code is part of what the
 * test checks, and no other test's data is there), and stops it afterwards.
 */
export async function withFreshServer(body: (server: TestServer, clients: Clients) => Promise<void>): Promise<void> {
  const server = await startTestServer();
  const clients = new Clients(server.url);
  try {
    await body(server, clients);
  } finally {
    clients.close();
    await server.dispose();
  }
}
