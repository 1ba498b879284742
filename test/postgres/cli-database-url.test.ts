import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { authenticate } from "../../src/access/authenticate.js";
import { ensureBootstrapped } from "../../src/bootstrap.js";
import { runCli } from "../../src/cli/gatehouse.js";
import { openPostgresDatabase } from "../../src/startup/open-postgres.js";
import { parsePostgresUrl } from "../../src/store/postgres/database-url.js";
import { createIdGenerator } from "../../src/support/ids.js";
import { createLogger } from "../../src/support/logger.js";
import { TestClock } from "../support/server.js";
import { type Cleanups, sharedDatabase } from "../support/shared-database.js";

// The operator's commands take a PostgreSQL database instead of the data dir's SQLite file (`--database-url`, or
// GATEHOUSE_DATABASE_URL), run in this process against a real PostgreSQL server.
const cleanups: Cleanups = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("gatehouse migrate --database-url", () => {
  it("migrates that PostgreSQL database, not the data dir's file, and names it without its password", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-cli-pg-");
    // The test cluster trusts local connections, so a password in the URL is carried but not checked: it must not be shown.
    const withPassword = new URL(shared.url);
    withPassword.password = "not-for-the-screen";
    const outcome = await runCli(["migrate", "--data-dir", shared.dir, "--database-url", withPassword.toString()]);
    expect(JSON.stringify(outcome)).not.toContain("not-for-the-screen");
    const { username, host, pathname } = withPassword;
    expect(outcome).toEqual({ kind: "done", lines: [`database postgres://${username}:***@${host}${pathname} is migrated`] });
    const tables = await shared.sql.query("select count(*)::int as n from information_schema.tables where table_schema = current_schema() and table_name = 'users'");
    expect(tables.rows[0]).toEqual({ n: 1 });
  });
});

describe("gatehouse recover-admin --database-url", () => {
  it("gives admin a new IAM_OWNER token in that PostgreSQL database, written to the data dir's admin.pat", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-cli-pg-recover-");
    const store = await openPostgresDatabase(parsePostgresUrl(shared.url)!);
    cleanups.push(() => store.close());
    const deps = { store, clock: new TestClock(), ids: createIdGenerator(), masterKey: randomBytes(32), externalUrl: "http://127.0.0.1:8080" };
    await ensureBootstrapped(deps, join(shared.dir, "bootstrap.pat"), createLogger("silent"));
    const tokensOf = async () => (await shared.sql.query("select count(*)::int as n from personal_access_tokens")).rows[0];
    expect(await tokensOf()).toEqual({ n: 1 });

    const outcome = await runCli(["recover-admin", "--data-dir", shared.dir, "--database-url", shared.url]);

    const tokenFile = join(shared.dir, "admin.pat");
    expect(outcome).toEqual({ kind: "done", lines: [`wrote a new IAM_OWNER token for it to ${tokenFile} (mode 0600)`] });
    expect(await tokensOf()).toEqual({ n: 2 });
    const principal = await authenticate(deps, `Bearer ${readFileSync(tokenFile, "utf8").trim()}`);
    expect(principal.memberships.filter((m) => m.level === "instance").flatMap((m) => m.roles)).toContain("IAM_OWNER");
  });
});

describe("GATEHOUSE_DATABASE_URL", () => {
  it("gives the commands the database as --database-url does, and --help names both", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-cli-pg-env-");
    vi.stubEnv("GATEHOUSE_DATABASE_URL", shared.url);
    const outcome = await runCli(["migrate", "--data-dir", shared.dir]);
    expect(outcome).toEqual({ kind: "done", lines: [expect.stringMatching(/^database postgres:\/\/.* is migrated$/)] });
    let help = "";
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => ((help += chunk), true)) as typeof process.stdout.write;
    try {
      await runCli(["migrate", "--help"]).catch(() => undefined);
    } finally {
      process.stdout.write = write;
    }
    expect(help.replace(/\s+/g, " ")).toContain("--database-url <url> a PostgreSQL database (postgres://…) instead of the data dir's SQLite file (env: GATEHOUSE_DATABASE_URL)");
  });
});

describe("a --database-url that is no PostgreSQL URL", () => {
  it("is refused before anything is opened, naming the flag", async () => {
    const error = await runCli(["migrate", "--data-dir", "/nonexistent/gatehouse", "--database-url", "mysql://db.example.com/iam"]).then(
      () => expect.fail("the command ran"),
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe("--database-url must be a postgres:// or postgresql:// URL");
  });
});
