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

  it("that does not exist: says so with PostgreSQL's code, and what to do", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-pg-missing-");
    const url = new URL(shared.url);
    url.pathname = "/gatehouse_no_such_database";
    const error = await refusal(url.toString());
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toBe("database postgres://gatehouse@db/iam does not exist (3D000): create it (createdb) or fix --database-url");
    expect(error.cause).toBeDefined();
  });

  it("that refuses the login (a role it does not know): says so with PostgreSQL's code, and what to check", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-pg-login-");
    const url = new URL(shared.url);
    url.username = "gatehouse_no_such_role";
    const error = await refusal(url.toString());
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toBe("database postgres://gatehouse@db/iam refused the login (28000): check the user and password");
    expect(error.cause).toBeDefined();
  });

  it("that refuses the login (a wrong password): says so with PostgreSQL's code, and what to check", async () => {
    const shared = await sharedDatabase(cleanups, "gatehouse-pg-password-");
    await shared.sql.query(`DO $$ BEGIN CREATE ROLE ${PASSWORD_CHECKED_ROLE} LOGIN PASSWORD 'the-right-one'; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    const url = new URL(shared.url);
    url.username = PASSWORD_CHECKED_ROLE;
    url.password = "a-wrong-one";
    const error = await refusal(url.toString());
    expect(error).toBeInstanceOf(StartupError);
    expect(error.message).toBe("database postgres://gatehouse@db/iam refused the login (28P01): check the user and password");
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
