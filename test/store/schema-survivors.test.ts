import { readFileSync } from "node:fs";
import { generateSQLiteDrizzleJson, generateSQLiteMigration } from "drizzle-kit/api";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/store/sqlite/schema/index.js";

// The tables the code declares (src/store/schema) are exactly the ones the committed migrations create: every
// column, key and index — the unique indexes carry business rules (db-errors.ts maps their violations). A change to
// the schema without its migration (`npm run db:generate`) would run against a database that lacks it.

const migrations = new URL("../../src/store/sqlite/migrations/", import.meta.url);

describe("the declared schema and the migrations", () => {
  it("agree: no migration is pending", async () => {
    const journal = JSON.parse(readFileSync(new URL("meta/_journal.json", migrations), "utf8")) as { entries: { idx: number }[] };
    const newest = journal.entries.at(-1)!;
    const migrated = JSON.parse(readFileSync(new URL(`meta/${String(newest.idx).padStart(4, "0")}_snapshot.json`, migrations), "utf8"));
    const declared = await generateSQLiteDrizzleJson(schema as Record<string, unknown>);
    expect(await generateSQLiteMigration(migrated, declared)).toEqual([]);
  });
});
