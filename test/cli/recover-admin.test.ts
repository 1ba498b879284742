import Database from "better-sqlite3";
import { Code } from "@connectrpc/connect";
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { EventService } from "../../gen/gatehouse/admin/v1/event_pb.js";
import { SmtpService } from "../../gen/gatehouse/admin/v1/smtp_pb.js";
import { dataFiles } from "../../src/config.js";
import { Clients } from "../support/clients.js";
import { freshDir, killStartedCommands, runGatehouse, serveGatehouse, stopGatehouse } from "../support/command.js";
import { failure } from "../support/errors.js";

const root = freshDir("recover");
const clients: Clients[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await killStartedCommands();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `gatehouse recover-admin` after admin.pat was lost; returns the new token and checks the file. */
async function recoverAdmin(dataDir: string, expectedLine: string): Promise<string> {
  const tokenFile = dataFiles({ dataDir }).adminToken;
  rmSync(tokenFile, { force: true });
  const result = await runGatehouse(["recover-admin", "--data-dir", dataDir]);
  expect(result).toMatchObject({ code: 0, stderr: "", stdout: `${expectedLine}\n` });
  expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
  return readFileSync(tokenFile, "utf8").trim();
}

/** The token passes an IAM_OWNER-only check: GetSmtpConfig answers not_found (none configured), not permission_denied. */
async function expectIamOwner(url: string, token: string): Promise<void> {
  const client = new Clients(url);
  clients.push(client);
  expect(await failure(client.client(SmtpService, "connect-json-http1", { token }).getSmtpConfig({}))).toMatchObject({ code: Code.NotFound, reason: "smtp.not_found" });
}

async function recoveredEvents(url: string, token: string) {
  const client = new Clients(url);
  clients.push(client);
  const { events } = await client.client(EventService, "connect-json-http1", { token }).listEvents({ aggregateType: "instance", pageSize: 1000 });
  return events.filter((event) => event.eventType === "instance.admin.recovered");
}

/** Changes the stopped server's database directly: what no API call can do today. */
function onDatabase(dataDir: string, sql: string): void {
  const db = new Database(dataFiles({ dataDir }).database);
  try {
    db.pragma("foreign_keys = ON");
    db.exec(sql);
  } finally {
    db.close();
  }
}

const ADMIN = "(SELECT id FROM users WHERE user_name = 'admin')";

describe("gatehouse recover-admin", () => {
  it("issues a new IAM_OWNER token into admin.pat (0600) while the server runs, when it is stopped, after IAM_OWNER was lost, and after the admin user was gone", async () => {
    const dataDir = join(root, "data");
    const tokenFile = dataFiles({ dataDir }).adminToken;
    const wrote = `wrote a new IAM_OWNER token for it to ${tokenFile} (mode 0600)`;

    // 1. Lost while the server runs: the running server accepts the new token at once.
    const running = await serveGatehouse(dataDir);
    const bootstrapToken = readFileSync(tokenFile, "utf8").trim();
    const whileRunning = await recoverAdmin(dataDir, wrote);
    expect(whileRunning).not.toBe(bootstrapToken);
    await expectIamOwner(running.url, whileRunning);
    expect(await recoveredEvents(running.url, whileRunning)).toHaveLength(1);
    await stopGatehouse(running);

    // 2. The admin user lost its IAM_OWNER membership (server stopped): it gets it back.
    // Meanwhile someone else issued a token for it: that one must not become an owner token.
    onDatabase(dataDir, `DELETE FROM memberships WHERE level = 'instance' AND user_id = ${ADMIN}`);
    onDatabase(dataDir, `INSERT INTO personal_access_tokens (id, user_id, secret_hash, expires_at, created_at, issuer_user_id) SELECT 'foreign-token', id, 'x', NULL, 0, 'someone-else' FROM users WHERE id = ${ADMIN}`);
    await recoverAdmin(dataDir, wrote);
    const db = new Database(dataFiles({ dataDir }).database, { readonly: true });
    const roles = db.prepare(`SELECT roles FROM memberships WHERE level = 'instance' AND user_id = ${ADMIN}`).pluck().get();
    const foreign = db.prepare("SELECT count(*) FROM personal_access_tokens WHERE id = 'foreign-token'").pluck().get();
    db.close();
    expect([JSON.parse(String(roles)), foreign]).toEqual([["IAM_OWNER"], 0]);

    // 3. The admin user is gone altogether (with its tokens): it is re-created.
    onDatabase(dataDir, `DELETE FROM users WHERE id = ${ADMIN}`);
    const afterUserGone = await recoverAdmin(dataDir, `re-created the admin user and wrote a new IAM_OWNER token for it to ${tokenFile} (mode 0600)`);

    const restarted = await serveGatehouse(dataDir);
    await expectIamOwner(restarted.url, afterUserGone);
    // The earlier user's token went with it.
    const client = new Clients(restarted.url);
    clients.push(client);
    expect(await failure(client.client(SmtpService, "connect-json-http1", { token: whileRunning }).getSmtpConfig({}))).toMatchObject({ code: Code.Unauthenticated });
    const events = await recoveredEvents(restarted.url, afterUserGone);
    expect(events.map((event) => [event.actor, event.payload?.userCreated])).toEqual([
      ["system", false],
      ["system", false],
      ["system", true],
    ]);
    await stopGatehouse(restarted);
  });
});
