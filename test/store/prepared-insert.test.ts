import Database from "better-sqlite3";
import { is, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { integer, SQLiteTable, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { preparedInsert, preparedInserts } from "../../src/store/sqlite/prepared-insert.js";
import * as schema from "../../src/store/sqlite/schema/index.js";

// src/store/sqlite/prepared-insert.ts: every row a SQLite commit inserts goes through an INSERT compiled once per
// table. It must store what drizzle's own insert stores (defaults, booleans, JSON), for every table of the schema.

let sqlite: Database.Database;

beforeEach(() => {
  sqlite = new Database(":memory:");
  migrate(drizzle(sqlite), { migrationsFolder: "src/store/sqlite/migrations" });
  // The rows here stand alone: what is checked is how each is stored, not what it refers to.
  sqlite.pragma("foreign_keys = OFF");
});

afterEach(() => {
  sqlite.close();
});

const tables = Object.entries(schema as Record<string, unknown>).filter((entry): entry is [string, SQLiteTable] => is(entry[1], SQLiteTable));

describe("prepared inserts", () => {
  it("compile for every table of the schema (a column with a default computed in SQL would make its inserts fail)", () => {
    expect(tables.length).toBeGreaterThanOrEqual(18);
    for (const [name, table] of tables) expect({ name, insert: typeof preparedInsert(sqlite, table) }).toEqual({ name, insert: "function" });
  });

  it("store a row as drizzle's insert does: booleans, JSON, and the defaults of the properties left out", () => {
    const db = drizzle(sqlite, { schema });
    // inactive, locked and failedPasswordAttempts left out (their defaults); emailVerified a boolean.
    const row = { id: "", instanceId: "i", orgId: "o", type: "human" as const, userName: "", userNameKey: "", displayName: "Ada", state: "active" as const, emailVerified: true, email: "ada@example.com" };
    preparedInsert(sqlite, schema.users)({ ...row, id: "prepared", userName: "ada", userNameKey: "ada" });
    db.insert(schema.users).values({ ...row, id: "drizzle", userName: "bob", userNameKey: "bob" }).run();
    const stored = sqlite.prepare("SELECT * FROM users ORDER BY id").all() as Record<string, unknown>[];
    const [byDrizzle, byPrepared] = stored.map(({ id, user_name, user_name_key, ...rest }) => rest);
    expect(byPrepared).toEqual(byDrizzle);
    expect(byPrepared).toMatchObject({ inactive: 0, locked: 0, failed_password_attempts: 0, email_verified: 1, phone: null });
    preparedInsert(sqlite, schema.memberships)({ id: "m1", userId: "prepared", level: "org", scopeId: "o", ownerOrgId: "o", roles: ["ORG_OWNER"] });
    expect(db.select().from(schema.memberships).all()).toMatchObject([{ id: "m1", roles: ["ORG_OWNER"] }]);
  });

  it("keep an explicit null as null, where a property left out takes the column's default", () => {
    sqlite.exec("CREATE TABLE notes (id TEXT PRIMARY KEY, note TEXT DEFAULT 'd')");
    const notes = sqliteTable("notes", { id: text("id").primaryKey(), note: text("note").default("d") });
    const insert = preparedInsert(sqlite, notes);
    insert({ id: "left-out" });
    insert({ id: "null", note: null });
    expect(sqlite.prepare("SELECT id, note FROM notes ORDER BY id").all()).toEqual([
      { id: "left-out", note: "d" },
      { id: "null", note: null },
    ]);
  });

  it("refuse a table with a value computed by drizzle per row or by SQLite, which a prepared statement cannot fill in", () => {
    // The tables exist, so only the guard can refuse them.
    sqlite.exec("CREATE TABLE a (id TEXT PRIMARY KEY, at INTEGER DEFAULT (unixepoch())); CREATE TABLE b (id TEXT PRIMARY KEY, at INTEGER)");
    sqlite.exec("CREATE TABLE c (id TEXT PRIMARY KEY, at INTEGER); CREATE TABLE d (id TEXT PRIMARY KEY, twice INTEGER GENERATED ALWAYS AS (1 + 1))");
    const tables = {
      "an SQL default": sqliteTable("a", { id: text("id").primaryKey(), at: integer("at").default(sql`(unixepoch())`) }),
      "a $defaultFn": sqliteTable("b", { id: text("id").primaryKey(), at: integer("at").$defaultFn(() => 1) }),
      "an $onUpdateFn": sqliteTable("c", { id: text("id").primaryKey(), at: integer("at").$onUpdateFn(() => 1) }),
      "a generated column": sqliteTable("d", { id: text("id").primaryKey(), twice: integer("twice").generatedAlwaysAs(sql`1 + 1`) }),
    };
    for (const [what, table] of Object.entries(tables)) expect({ what, thrown: (() => { try { preparedInsert(sqlite, table); return false; } catch { return true; } })() }).toEqual({ what, thrown: true });
  });

  it("compile each table's insert once, on its first row", () => {
    let compiled = 0;
    const counting = new Proxy(sqlite, {
      get: (target, property) => (property === "prepare" ? (source: string) => (compiled++, target.prepare(source)) : Reflect.get(target, property, target)),
    });
    const insertRow = preparedInserts(counting);
    for (const id of ["a", "b", "c"]) insertRow(schema.passwordPolicies, { instanceId: id, minLength: 8, requireUppercase: false, requireLowercase: false, requireDigit: false, requireSymbol: false });
    expect(compiled).toBe(1);
    expect(sqlite.prepare("SELECT count(*) AS n FROM password_policies").get()).toEqual({ n: 3 });
  });
});
