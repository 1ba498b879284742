import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { openSqlite } from "../../src/store/sqlite/db.js";
import { toDomainError } from "../../src/store/sqlite/sqlite-errors.js";

// How SQLite's driver errors reach clients (src/store/sqlite/sqlite-errors.ts; the rules in src/store/db-errors.ts): a
// unique index that guards a business rule answers with that rule's reason (the proto docs of each RPC), a broken
// reference with failed_precondition `reference.not_found`, a busy database with unavailable `store.busy` (retry), and
// anything unexpected is passed on unchanged (it becomes `internal`). The driver errors here are real ones, raised by
// SQLite on a migrated file. That each rule's index answers with its reason through a commit, on every engine, is in
// store-contract.test.ts.

let dir: string;
let raw: Database.Database;
const path = () => join(dir, "db.sqlite");

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-db-errors-"));
  raw = openSqlite({ path: path(), synchronous: "NORMAL", busyTimeoutMs: 0 }).sqlite;
  raw.prepare("INSERT INTO instances (id, name, default_org_id) VALUES ('i1', 'I', 'o1')").run();
  raw.prepare("INSERT INTO organizations (id, instance_id, name, name_key, state) VALUES ('o1', 'i1', 'O', 'o', 'active')").run();
});

afterEach(() => {
  raw.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The error SQLite raises for `statement`. */
function driverError(statement: string, db = raw): unknown {
  try {
    db.prepare(statement).run();
  } catch (error) {
    return error;
  }
  throw new Error(`expected SQLite to refuse: ${statement}`);
}

describe("unique indexes that guard a rule answer with the rule's reason", () => {
  it("a second event of one aggregate at the same version is aborted store.concurrent_write: the caller retries", () => {
    const insert = "INSERT INTO events (instance_id, aggregate_type, aggregate_id, aggregate_version, type, payload, actor, resource_owner, created_at) VALUES ('i1', 'user', 'u1', 1, 'user.added', '{}', 'a', 'o1', 0)";
    raw.prepare(insert).run();
    const mapped = toDomainError(driverError(insert));
    expect(mapped).toBeInstanceOf(DomainError);
    expect(mapped).toMatchObject({ kind: "aborted", reason: "store.concurrent_write", message: expect.stringMatching(/concurrently.*retry/) });
  });

  it("a unique violation of an index that guards no rule (a duplicate primary key) is passed on unchanged", () => {
    const error = driverError("INSERT INTO organizations (id, instance_id, name, name_key, state) VALUES ('o1', 'i1', 'Other', 'other', 'active')");
    expect((error as { code: string }).code).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
    expect(toDomainError(error)).toBe(error);
  });
});

describe("other driver errors", () => {
  it("a reference to a row that does not exist is failed_precondition reference.not_found", () => {
    const mapped = toDomainError(driverError("INSERT INTO projects (id, instance_id, org_id, name, name_key, state) VALUES ('p1', 'i1', 'no-such-org', 'P', 'p', 'active')"));
    expect(mapped).toBeInstanceOf(DomainError);
    expect(mapped).toMatchObject({ kind: "failed_precondition", reason: "reference.not_found", message: expect.stringMatching(/referenced object does not exist/) });
  });

  it("a database another connection holds is unavailable store.busy, so the caller retries", () => {
    const other = new Database(path());
    try {
      other.pragma("busy_timeout = 0");
      raw.exec("BEGIN IMMEDIATE");
      const error = driverError("INSERT INTO organizations (id, instance_id, name, name_key, state) VALUES ('o9', 'i1', 'N', 'n', 'active')", other);
      raw.exec("ROLLBACK");
      expect((error as { code: string }).code).toBe("SQLITE_BUSY");
      const mapped = toDomainError(error);
      expect(mapped).toBeInstanceOf(DomainError);
      expect(mapped).toMatchObject({ kind: "unavailable", reason: "store.busy", message: expect.stringMatching(/busy.*retry/) });
    } finally {
      other.close();
    }
  });

  it("a locked table (SQLITE_LOCKED) is unavailable store.busy too", () => {
    const mapped = toDomainError(new Database.SqliteError("database table is locked", "SQLITE_LOCKED"));
    expect(mapped).toMatchObject({ kind: "unavailable", reason: "store.busy" });
  });

  it("a constraint error that carries no message is passed on unchanged", () => {
    const error = Object.assign(new Error(), { code: "SQLITE_CONSTRAINT_UNIQUE", message: undefined });
    expect(toDomainError(error)).toBe(error);
  });

  it("what is thrown that is no error object (null, undefined, a string) is passed on unchanged", () => {
    expect(toDomainError(null)).toBeNull();
    expect(toDomainError(undefined)).toBeUndefined();
    expect(toDomainError("SQLITE_BUSY")).toBe("SQLITE_BUSY");
  });

  it("a DomainError passes through as it is", () => {
    const error = new DomainError("aborted", "store.condition_failed", "gone");
    expect(toDomainError(error)).toBe(error);
  });
});
