import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { UserService } from "../../gen/gatehouse/admin/v1/user_pb.js";
import { dataFiles } from "../../src/config.js";
import { Clients } from "../support/clients.js";
import { expectOneLineFailure, freshDir, killStartedCommands, runGatehouse, serveGatehouse, stopGatehouse } from "../support/command.js";
import { eventually } from "../support/eventually.js";
import { startTestServer } from "../support/server.js";
import { makeTestCa, startSmtpServer, type TestSmtpServer } from "../support/smtp.js";

const root = freshDir("backup");
const clients: Clients[] = [];
let relay: TestSmtpServer | undefined;
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await killStartedCommands();
});
afterAll(async () => {
  await relay?.close();
  rmSync(root, { recursive: true, force: true });
});

const SMTP_USER = "relay-user";
const SMTP_PASSWORD = "relay-password-sealed-at-rest";

/** CreateMachineUser in a loop over Connect JSON; `acknowledged` holds the id of every answered call. */
function startWriteLoop(users: Client<typeof UserService>) {
  const acknowledged: string[] = [];
  const errors: unknown[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running; i++) {
      try {
        const { userId } = await users.createMachineUser({ userName: `load-${i}`, name: `Load ${i}` });
        acknowledged.push(userId);
      } catch (error) {
        errors.push(error);
        return;
      }
    }
  })();
  return {
    acknowledged,
    errors,
    async stop() {
      running = false;
      await done;
    },
  };
}

const sourceDir = join(root, "source");
const backupFile = join(root, "gatehouse-backup.db");

describe("gatehouse backup while serving under write load, then restore and serve", () => {
  it("the restored data dir serves every user acknowledged before the backup started, the admin token, and the sealed SMTP password", async () => {
    // The password only travels over TLS: a relay with STARTTLS and a certificate from a test CA.
    const ca = makeTestCa();
    relay = await startSmtpServer({ tls: "starttls", certificate: { key: ca.key, cert: ca.cert }, auth: { user: SMTP_USER, pass: SMTP_PASSWORD } });
    const source = await serveGatehouse(sourceDir);
    const adminToken = readFileSync(dataFiles({ dataDir: sourceDir }).adminToken, "utf8").trim();
    const sourceClients = new Clients(source.url);
    clients.push(sourceClients);
    await sourceClients
      .client(SmtpService, "connect-json-http1", { token: adminToken })
      .createSmtpConfig({ senderAddress: "gatehouse@example.com", senderName: "Gatehouse", tls: true, host: `127.0.0.1:${relay.port}`, user: SMTP_USER, password: SMTP_PASSWORD });

    const load = startWriteLoop(sourceClients.client(UserService, "connect-json-http1", { token: adminToken }));
    await eventually(() => load.acknowledged.length >= 50 || load.errors.length > 0, { what: "the write loop to get going", timeoutMs: 15_000 });
    const acknowledgedBeforeBackup = [...load.acknowledged];
    const backup = await runGatehouse(["backup", "--to", backupFile, "--data-dir", sourceDir]);
    const acknowledgedWhileBackingUp = load.acknowledged.length - acknowledgedBeforeBackup.length;
    await load.stop();
    await stopGatehouse(source);

    expect(load.errors).toEqual([]);
    // The backup really ran under load: writes were acknowledged while it copied.
    expect(acknowledgedWhileBackingUp).toBeGreaterThan(0);
    expect(backup.code).toBe(0);
    expect(backup.stderr).toBe("");
    expect(backup.stdout).toMatch(new RegExp(`^backup ${backupFile}: \\d+ events up to sequence \\d+\\n`));
    expect(backup.stdout).toContain(
      `the master key is not in the backup: keep a copy of ${dataFiles({ dataDir: sourceDir }).masterKey} apart from it; restore needs it (--master-key)\n`,
    );
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    // Not silently in the backup: neither the key file's text nor its 32 raw bytes.
    const keyText = readFileSync(dataFiles({ dataDir: sourceDir }).masterKey, "utf8").trim();
    const backupBytes = readFileSync(backupFile);
    expect(backupBytes.includes(Buffer.from(keyText, "base64"))).toBe(false);
    expect(backupBytes.includes(Buffer.from(keyText, "utf8"))).toBe(false);

    const restoredDir = join(root, "restored");
    const restore = await runGatehouse(["restore", "--from", backupFile, "--data-dir", restoredDir, "--master-key", dataFiles({ dataDir: sourceDir }).masterKey]);
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    expect(restore.stdout).toMatch(new RegExp(`^restored \\d+ events \\(up to sequence \\d+\\) into ${restoredDir}; start it with: gatehouse serve --data-dir ${restoredDir}\\n$`));
    expect(statSync(dataFiles({ dataDir: restoredDir }).masterKey).mode & 0o777).toBe(0o600);

    const restored = await serveGatehouse(restoredDir, ["--smtp-ca-file", ca.caFile]);
    const restoredClients = new Clients(restored.url);
    clients.push(restoredClients);
    const users = restoredClients.client(UserService, "connect-json-http1", { token: adminToken });
    const present: boolean[] = [];
    for (let i = 0; i < load.acknowledged.length; i += 25) {
      const chunk = load.acknowledged.slice(i, i + 25);
      present.push(
        ...(await Promise.all(
          chunk.map((userId) =>
            users.getUser({ userId }).then(
              (r) => r.user?.userId === userId,
              (error: unknown) => {
                if (ConnectError.from(error).code === Code.NotFound) return false;
                throw error;
              },
            ),
          ),
        )),
      );
    }
    // Every user acknowledged before the backup started is there; and the copy is one consistent
    // snapshot: the users it holds are a prefix of the acknowledged sequence, without holes.
    const kept = present.indexOf(false) === -1 ? present.length : present.indexOf(false);
    expect(kept).toBeGreaterThanOrEqual(acknowledgedBeforeBackup.length);
    expect(present.slice(kept).every((p) => !p)).toBe(true);

    const smtp = restoredClients.client(SmtpService, "connect-json-http1", { token: adminToken });
    expect((await smtp.getSmtpConfig({})).config?.hasPassword).toBe(true);
    // The password opens with the restored key: the relay accepts the login made with it.
    const test = await smtp.testSmtpConfig({ receiverAddress: "restore-check@example.com" });
    expect(test.steps.find((step) => step.step === "auth"), JSON.stringify(test.steps)).toMatchObject({ ok: true });
    expect(test.ok).toBe(true);
    await stopGatehouse(restored);
  }, 120_000); // Four processes (two servers, backup, restore) and a write load: 30 s is too tight on two busy cores.

  it("refuses what would lose or leak data: a non-empty target, a wrong master key, overwriting a backup file", async () => {
    // Its own bootstrapped data dir and backup, whatever the test above did.
    const sourceDir = join(root, "refusals-source");
    const backupFile = join(root, "refusals-backup.db");
    await (await startTestServer({ dataDir: sourceDir })).stop();
    expect((await runGatehouse(["backup", "--to", backupFile, "--data-dir", sourceDir])).code).toBe(0);
    const masterKey = dataFiles({ dataDir: sourceDir }).masterKey;
    const otherKey = join(root, "other.key");
    writeFileSync(otherKey, `${Buffer.alloc(32, 7).toString("base64")}\n`);
    const wrongKeyDir = join(root, "wrong-key-target");
    const before = readFileSync(backupFile);

    const [nonEmpty, wrongKey, overwrite] = await Promise.all([
      runGatehouse(["restore", "--from", backupFile, "--data-dir", sourceDir, "--master-key", masterKey]),
      runGatehouse(["restore", "--from", backupFile, "--data-dir", wrongKeyDir, "--master-key", otherKey]),
      runGatehouse(["backup", "--to", backupFile, "--data-dir", sourceDir]),
    ]);
    expectOneLineFailure(nonEmpty, `data dir ${sourceDir} is not empty: restore only into an empty data dir (stop the server and move the old one aside)`);
    expectOneLineFailure(wrongKey, `master key ${otherKey} does not open this backup's sealed data: use the key of the data dir the backup was taken from`);
    expect(existsSync(wrongKeyDir)).toBe(false);
    expectOneLineFailure(overwrite, `${backupFile} exists already: choose a new file (a backup never overwrites)`);
    expect(readFileSync(backupFile).equals(before)).toBe(true);
  });
});
