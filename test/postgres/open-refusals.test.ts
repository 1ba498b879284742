import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { openPostgresDatabase } from "../../src/startup/open-postgres.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { PASSWORD_CHECKED_ROLE } from "../support/postgres-server.js";
import { type Cleanups, sharedDatabase } from "../support/shared-database.js";

// What opening a PostgreSQL database at start-up refuses, each as one line that names the database (without its
// password) and what to do (src/startup/open-postgres.ts), against a real PostgreSQL server.
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("a PostgreSQL database the server cannot take as it is", () => {
  const refusal = (url: string) =>
    openPostgresDatabase({ url, display: "postgres://gatehouse@db/iam" }).then(
      async (store) => {
        await store.close();
        return expect.fail("the database was opened");
      },
      (error: unknown) => error as StartupError,
    );

  it("migrated by a newer Gatehouse: says so, and what to do", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-pg-newer-");
    await (await openPostgresDatabase({ url: shared.url, display: "first" })).close();
    await shared.sql.query("INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-the-future', $1)", [String(Date.now() + 10 * 365 * 86_400_000)]);
    const error = await refusal(shared.url);
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toMatch(/^database postgres:\/\/gatehouse@db\/iam was migrated by a newer Gatehouse version \(.+\): run that version or restore a backup$/);
    expect(error.cause).toBeDefined();
  });

  it("whose migration fails for another reason: names it with PostgreSQL's code and message", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-pg-conflict-");
    // Something else's table where Gatehouse's first migration creates one.
    await shared.sql.query("CREATE TABLE instances (id integer)");
    const error = await refusal(shared.url);
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toMatch(/^database postgres:\/\/gatehouse@db\/iam could not be opened or migrated \(42P07: .*instances.* already exists\)$/);
    expect(error.cause).toBeDefined();
  });

  /** The refusal of a fresh test database's URL as `edit` changes it (another database, role or password). */
  const refusalOfEdited = async (prefix: string, edit: (url: URL) => void) => {
    const shared = await sharedDatabase(cleanups, prefix);
    // The role whose password the test cluster checks (every other login is trusted), made once per cluster.
    await shared.sql.query(`DO $$ BEGIN CREATE ROLE ${PASSWORD_CHECKED_ROLE} LOGIN PASSWORD 'the-right-one'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    const url = new URL(shared.url);
    edit(url);
    return refusal(url.toString());
  };

  it.each<[string, (url: URL) => void, string]>([
    ["that does not exist", (url) => { url.pathname = "/gatehouse_no_such_database"; }, "does not exist (3D000): create it (createdb) or fix --database-url"],
    ["that does not know the role", (url) => { url.username = "gatehouse_no_such_role"; }, "refused the login (28000): check the user and password"],
    ["that checks the password, given a wrong one", (url) => { url.username = PASSWORD_CHECKED_ROLE; url.password = "a-wrong-one"; }, "refused the login (28P01): check the user and password"],
  ])("%s: says so with PostgreSQL's code and what to do, never the password", async (_case, edit, says) => {
    const error = await refusalOfEdited("gatehouse-pg-refused-", edit);
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toBe(`database postgres://gatehouse@db/iam ${says}`);
    expect(error.message).not.toContain("a-wrong-one");
    expect(error.cause).toBeDefined();
  });

  it("that nothing answers at: says it cannot be reached, and what to check", async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const error = await refusal(`postgres://postgres@127.0.0.1:${port}/gatehouse`);
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toBe("database postgres://gatehouse@db/iam cannot be reached (ECONNREFUSED): check the host and port, and that PostgreSQL runs");
    expect(error.cause).toBeDefined();
  });
});
