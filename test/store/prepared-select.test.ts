import Database from "better-sqlite3";
import { and, asc, eq, getTableColumns, getTableName, is, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { type SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { preparedInsert } from "../../src/store/sqlite/prepared-insert.js";
import { preparedSelect } from "../../src/store/sqlite/prepared-select.js";
import * as schema from "../../src/store/sqlite/schema/index.js";

// src/store/sqlite/prepared-select.ts: the hot reads of the SQLite store select whole rows through a statement
// compiled once and map them themselves. They must answer exactly what drizzle's `db.select().from(table)` answers
// (JSON parsed, booleans decoded, NULL kept as null, every property present), for every table of the schema.

let sqlite: Database.Database;

beforeEach(() => {
  sqlite = new Database(":memory:");
  migrate(drizzle(sqlite), { migrationsFolder: "src/store/sqlite/migrations" });
  // The rows here stand alone: what is checked is how each is read, not what it refers to or whether it is unique.
  sqlite.pragma("foreign_keys = OFF");
  for (const { name } of sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() as { name: string }[]) sqlite.exec(`DROP INDEX "${name}"`);
});

afterEach(() => {
  sqlite.close();
});

const tables = Object.entries(schema as Record<string, unknown>).filter((entry): entry is [string, SQLiteTable] => is(entry[1], SQLiteTable));

/** A value of the column's type; `n` makes each row's values differ. */
function valueOf(column: SQLiteColumn, n: number): unknown {
  const { columnType, enumValues } = column as SQLiteColumn & { enumValues?: string[] };
  if (columnType === "SQLiteTextJson") return n % 2 === 0 ? [`role-${n}`, "ORG_OWNER"] : { nested: { n }, list: [n, null, "x"] };
  if (columnType === "SQLiteBoolean") return n % 2 === 1;
  if (columnType === "SQLiteInteger") return 1_700_000_000_000 + n;
  if (enumValues && enumValues.length > 0) return enumValues[n % enumValues.length];
  return `${column.name}-${n}-é`;
}

/** Three rows of `table`: two with every column set, one with every nullable column null. */
function rowsOf(table: SQLiteTable): Record<string, unknown>[] {
  const columns = Object.entries(getTableColumns(table)) as [string, SQLiteColumn][];
  return [1, 2, 3].map((n) => Object.fromEntries(columns.map(([key, column]) => [key, n === 3 && !column.notNull ? null : valueOf(column, n)])));
}

describe("prepared selects answer what drizzle's select answers", () => {
  it("for every table of the schema, by its first column, row for row, property for property", () => {
    const db = drizzle(sqlite, { schema });
    expect(tables.length).toBeGreaterThanOrEqual(18);
    for (const [name, table] of tables) {
      const [key] = Object.values(getTableColumns(table)) as SQLiteColumn[];
      const insert = preparedInsert(sqlite, table);
      const rows = rowsOf(table);
      for (const row of rows) insert(row);
      const select = preparedSelect(sqlite, table, [key!]);
      for (const row of rows) {
        const value = row[Object.keys(row)[0]!];
        const byDrizzle = db.select().from(table).where(eq(key!, value)).all();
        expect({ name, rows: select.all(value) }).toStrictEqual({ name, rows: byDrizzle });
        expect({ name, row: select.get(value) }).toStrictEqual({ name, row: byDrizzle[0] });
        // Every value as it was inserted: JSON, booleans and nulls included.
        expect({ name, row: select.get(value) }).toStrictEqual({ name, row });
      }
    }
  });

  it("answer undefined and an empty list when no row matches", () => {
    const select = preparedSelect(sqlite, schema.organizations, [schema.organizations.id]);
    expect(select.get("none")).toBeUndefined();
    expect(select.all("none")).toEqual([]);
  });

  it("match on every column named, and in the order asked for (a column, then the insertion order)", () => {
    const db = drizzle(sqlite, { schema });
    const { personalAccessTokens: tokens } = schema;
    const insert = preparedInsert(sqlite, tokens);
    // Inserted out of creation order, two at the same time: the time orders them, then the insertion.
    const token = (id: string, userId: string, createdAt: number) => ({ id, userId, secretHash: `h-${id}`, expiresAt: null, createdAt, issuerUserId: null });
    for (const row of [token("c", "u1", 300), token("a", "u1", 100), token("x", "u2", 100), token("b2", "u1", 200), token("b1", "u1", 200)]) insert(row);
    const ofUser = preparedSelect(sqlite, tokens, [tokens.userId], [tokens.createdAt, "rowid"]);
    const byDrizzle = db.select().from(tokens).where(eq(tokens.userId, "u1")).orderBy(asc(tokens.createdAt), asc(sql`rowid`)).all();
    expect(ofUser.all("u1").map((row) => row.id)).toEqual(["a", "b2", "b1", "c"]);
    expect(ofUser.all("u1")).toStrictEqual(byDrizzle);

    const { memberships } = schema;
    const member = preparedInsert(sqlite, memberships);
    member({ id: "m1", userId: "u1", level: "org", scopeId: "o1", ownerOrgId: "o1", roles: ["ORG_OWNER"] });
    member({ id: "m2", userId: "u1", level: "project", scopeId: "o1", ownerOrgId: "o1", roles: ["PROJECT_OWNER"] });
    member({ id: "m3", userId: "u1", level: "org", scopeId: "o2", ownerOrgId: "o2", roles: ["ORG_OWNER"] });
    const exact = preparedSelect(sqlite, memberships, [memberships.userId, memberships.level, memberships.scopeId]);
    expect(exact.all("u1", "org", "o1").map((row) => row.id)).toEqual(["m1"]);
    expect(exact.get("u1", "project", "o1")).toStrictEqual(db.select().from(memberships).where(and(eq(memberships.userId, "u1"), eq(memberships.level, "project"), eq(memberships.scopeId, "o1"))).get());
    expect(exact.get("u1", "project", "o2")).toBeUndefined();
  });

  it("name the table and columns as the schema does (quoted), whatever their SQL names", () => {
    const texts: string[] = [];
    const counting = new Proxy(sqlite, {
      get: (target, property) => (property === "prepare" ? (source: string) => (texts.push(source), target.prepare(source)) : Reflect.get(target, property, target)),
    });
    preparedSelect(counting, schema.projectRoles, [schema.projectRoles.projectId], ["rowid"]);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(new RegExp(`^SELECT "[a-z_]+"(, "[a-z_]+")* FROM "${getTableName(schema.projectRoles)}" WHERE "project_id" = \\? ORDER BY rowid$`));
  });
});
