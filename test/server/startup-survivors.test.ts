import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startGatehouse } from "../../src/app.js";
import { dataFiles, loadConfig } from "../../src/config.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { DataDirLockedError } from "../../src/support/data-dir-lock.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { Clients } from "../support/clients.js";
import { LogCapture, startTestServer } from "../support/server.js";
import { makeTestCa, startSmtpServer } from "../support/smtp.js";

// A start that fails (app.ts startGatehouse) throws the cause the operator must fix, logs its details at debug
// level, and gives back what it took: the port, the data dir lock, the database. And the URL it announces brackets
// an IPv6 host.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-startup-"));
  dirs.push(dir);
  return dir;
};

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function configFor(dataDir: string, port: number) {
  return loadConfig([], { GATEHOUSE_PORT: String(port), GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_LOG_LEVEL: "debug", GATEHOUSE_DB_SYNCHRONOUS: "NORMAL" });
}

describe("a start that fails", () => {
  it("before the data dir is locked (the data dir is a file): throws the data dir's error and frees the port", async () => {
    const file = join(scratch(), "not-a-dir");
    writeFileSync(file, "");
    const port = await freePort();
    const logs = new LogCapture();
    const failed = await startGatehouse({ config: configFor(file, port), logDestination: logs }).then(
      () => expect.fail("the start succeeded"),
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(StartupError);
    expect((failed as Error).message).toContain(file);
    const debug = logs.parsed().find((line) => line.msg === "start-up failed");
    expect(debug?.level).toBe(20);
    expect((debug?.err as { message?: string } | undefined)?.message).toContain((failed as Error).message);
    // The port is free again.
    await new Promise<void>((resolve, reject) => {
      const again = net.createServer().once("error", reject).listen(port, "127.0.0.1", () => again.close(() => resolve()));
    });
  });

  it("after the lock, before the database (the master key of an existing database is gone): throws that, and unlocks the data dir", async () => {
    const dataDir = scratch();
    const first = await startTestServer({ dataDir });
    await first.stop();
    const config = configFor(dataDir, 0);
    const keyFile = dataFiles(config).masterKey;
    const key = readFileSync(keyFile);
    unlinkSync(keyFile);
    const failed = await startGatehouse({ config, logDestination: new LogCapture() }).then(
      () => expect.fail("the start succeeded"),
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(StartupError);
    expect((failed as Error).message).toMatch(/master key .* is missing/);
    // With the key back, the next start in the same data dir is not refused as locked.
    writeFileSync(keyFile, key, { mode: 0o600 });
    const second = await startTestServer({ dataDir });
    await second.stop();
  });

  it("on a SQLite data dir another server holds: refused as locked, and the running server keeps its database", async () => {
    const dataDir = scratch();
    const first = await startTestServer({ dataDir });
    try {
      const failed = await startGatehouse({ config: configFor(dataDir, 0), logDestination: new LogCapture() }).then(
        () => expect.fail("a second server started on a data dir in use"),
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(DataDirLockedError);
      expect((failed as Error).message).toContain(dataDir);
      expect((failed as Error).message).toContain(String(process.pid));
      // The refused start took nothing from the first: it still answers.
      const health = await fetch(`${first.url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      await first.stop();
    }
  });
});

describe("files read before anything is written", () => {
  it("a missing TLS certificate fails the first start and leaves no data dir behind", async () => {
    const dataDir = join(scratch(), "data");
    const config = { ...configFor(dataDir, 0), tls: { certPath: join(scratch(), "missing-cert.pem"), keyPath: join(scratch(), "missing-key.pem") } };
    await expect(startGatehouse({ config, logDestination: new LogCapture() })).rejects.toBeInstanceOf(StartupError);
    expect(existsSync(dataDir)).toBe(false);
  });

  it("a missing SMTP CA file fails the start naming the file and its flag", async () => {
    const dataDir = join(scratch(), "data");
    const caFile = join(scratch(), "missing-ca.pem");
    const base = configFor(dataDir, 0);
    const config = { ...base, mail: { ...base.mail, smtpCaFile: caFile } };
    const failed = await startGatehouse({ config, logDestination: new LogCapture() }).then(
      () => expect.fail("the start succeeded"),
      (error: unknown) => error as Error,
    );
    expect(failed).toBeInstanceOf(StartupError);
    expect(failed.message).toContain(`SMTP CA file ${caFile}`);
    expect(failed.message).toContain("--smtp-ca-file");
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("what the operator reads in the log", () => {
  it("the first start says where the admin token is; each start the URL and data dir it serves; a stop that it stopped", async () => {
    const dataDir = scratch();
    const server = await startTestServer({ dataDir });
    await server.stop();
    const lines = server.logs.parsed();
    const bootstrapped = lines.find((line) => line.tokenFile !== undefined);
    expect(bootstrapped?.tokenFile).toBe(dataFiles(configFor(dataDir, 0)).adminToken);
    expect(bootstrapped?.msg).toMatch(/admin token/);
    expect(lines.find((line) => line.msg === "gatehouse listening")).toMatchObject({ url: server.url, dataDir });
    expect(lines.at(-1)?.msg).toBe("gatehouse stopped");
  });
});

describe("the mail settings of the configuration", () => {
  it("reach the SMTP client: the CA of --smtp-ca-file is trusted, and --smtp-timeout-ms bounds a relay that never answers", async () => {
    const ca = makeTestCa();
    const relay = await startSmtpServer({ tls: "starttls", certificate: ca });
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const server = await startTestServer({ dataDir: scratch(), config: { mail: { smtpCaFile: ca.caFile, smtpTimeoutMs: 500, pollMs: 60_000, maxAttempts: 1, retryBaseMs: 1_000 } } });
    const clients = new Clients(server.url);
    try {
      const smtp = clients.client(SmtpService, "connect-json-http1", { token: server.adminToken });
      const config = { senderAddress: "noreply@gatehouse.test", senderName: "Gatehouse", tls: true, host: `localhost:${relay.port}`, user: "" };
      const trusted = await smtp.testSmtpConfig({ receiverAddress: "probe@example.com", config });
      expect(trusted.steps.find((step) => step.step === "tls")).toMatchObject({ ok: true });
      const started = Date.now();
      const stalled = await smtp.testSmtpConfig({ receiverAddress: "probe@example.com", config: { ...config, host: `127.0.0.1:${(silent.address() as net.AddressInfo).port}` } });
      expect(stalled.ok).toBe(false);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      clients.close();
      await server.stop();
      await relay.close();
      silent.close();
    }
  });
});

describe("the announced URL", () => {
  it("brackets an IPv6 host", async () => {
    const dataDir = scratch();
    const server = await startTestServer({ dataDir, config: { host: "::1" } });
    try {
      expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
