import { afterEach, describe, expect, it } from "vitest";
import { openPostgresDatabase } from "../../src/startup/open-postgres.js";
import { StartupError } from "../../src/startup/startup-error.js";
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
});
