import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { withStatementCache } from "../../src/store/sqlite/statement-cache.js";

// src/store/sqlite/statement-cache.ts: drizzle's connection keeps compiled statements by SQL text — the same text gets
// the same compiled statement back, the least recently used beyond the size are dropped, and a reused reader answers
// plain rows whatever result mode its last user set; everything else of the connection is the connection's own.

let sqlite: Database.Database;

beforeEach(() => {
  sqlite = new Database(":memory:");
  sqlite.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)");
  sqlite.exec("INSERT INTO t (name) VALUES ('a'), ('b')");
});

afterEach(() => {
  sqlite.close();
});

describe("the statement cache", () => {
  it("gives the compiled statement of a SQL text back, and a new one for another text", () => {
    const cached = withStatementCache(sqlite);
    const select = cached.prepare("SELECT name FROM t ORDER BY id");
    expect(cached.prepare("SELECT name FROM t ORDER BY id")).toBe(select);
    expect(cached.prepare("SELECT id FROM t ORDER BY id")).not.toBe(select);
  });

  it("answers plain rows from a reused reader whose last user asked for raw rows", () => {
    const cached = withStatementCache(sqlite);
    expect(cached.prepare("SELECT name FROM t ORDER BY id").raw().all()).toEqual([["a"], ["b"]]);
    expect(cached.prepare("SELECT name FROM t ORDER BY id").all()).toEqual([{ name: "a" }, { name: "b" }]);
  });

  it("reuses writers as they are", () => {
    const cached = withStatementCache(sqlite);
    cached.prepare("UPDATE t SET name = ? WHERE id = ?").run("c", 1);
    cached.prepare("UPDATE t SET name = ? WHERE id = ?").run("d", 2);
    expect(sqlite.prepare("SELECT name FROM t ORDER BY id").pluck().all()).toEqual(["c", "d"]);
  });

  it("keeps at most `size` statements, dropping the least recently used", () => {
    const cached = withStatementCache(sqlite, 2);
    const first = cached.prepare("SELECT 1");
    const second = cached.prepare("SELECT 2");
    expect(cached.prepare("SELECT 1")).toBe(first);
    cached.prepare("SELECT 3");
    expect(cached.prepare("SELECT 1")).toBe(first);
    expect(cached.prepare("SELECT 2")).not.toBe(second);
  });

  it("is the connection for everything else", () => {
    const cached = withStatementCache(sqlite);
    expect(cached).toBeInstanceOf(Database);
    expect(cached.inTransaction).toBe(false);
    cached.transaction(() => cached.prepare("INSERT INTO t (name) VALUES ('e')").run())();
    expect(cached.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 3 });
    expect(cached.open).toBe(true);
  });
});
