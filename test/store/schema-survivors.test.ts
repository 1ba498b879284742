import { readFileSync } from "node:fs";
import { generateDrizzleJson, generateMigration, generateSQLiteDrizzleJson, generateSQLiteMigration } from "drizzle-kit/api";
import { describe, expect, it } from "vitest";
import * as postgresSchema from "../../src/store/postgres/schema/index.js";
import * as schema from "../../src/store/sqlite/schema/index.js";

// The tables the code declares (src/store/<engine>/schema) are exactly the ones the committed migrations create: every
// column, key and index — the unique indexes carry business rules (db-errors.ts maps their violations). A change to
// the schema without its migration (`npm run db:generate`, or drizzle-kit with the engine's config) would run against
// a database that lacks it.

/** The snapshot of the newest migration in a drizzle migrations folder. */
function newestSnapshot(migrations: URL) {
  const journal = JSON.parse(readFileSync(new URL("meta/_journal.json", migrations), "utf8")) as { entries: { idx: number }[] };
  const newest = journal.entries.at(-1)!;
  return JSON.parse(readFileSync(new URL(`meta/${String(newest.idx).padStart(4, "0")}_snapshot.json`, migrations), "utf8"));
}

describe("the declared schema and the migrations", () => {
  it("agree on SQLite: no migration is pending", async () => {
    const migrated = newestSnapshot(new URL("../../src/store/sqlite/migrations/", import.meta.url));
    const declared = await generateSQLiteDrizzleJson(schema as Record<string, unknown>);
    expect(await generateSQLiteMigration(migrated, declared)).toEqual([]);
  });

  it("agree on PostgreSQL: no migration is pending", async () => {
    const migrated = newestSnapshot(new URL("../../src/store/postgres/migrations/", import.meta.url));
    const declared = generateDrizzleJson(postgresSchema as Record<string, unknown>);
    expect(await generateMigration(migrated, declared)).toEqual([]);
  });
});
