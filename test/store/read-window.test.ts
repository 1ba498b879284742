import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createReadWindows, insideReadWindows } from "../../src/store/sqlite/read-window.js";

// src/store/sqlite/read-window.ts: the reads of one turn of the event loop share one read snapshot; the window ends
// when the turn is over or before a write; another connection's commits are noted when a window opens, before any
// read of that window returns.

let dir: string;
let server: Database.Database;
let other: Database.Database;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-read-window-"));
  server = new Database(join(dir, "db.sqlite"));
  server.pragma("journal_mode = WAL");
  server.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)");
  other = new Database(join(dir, "db.sqlite"));
});

afterEach(() => {
  server.close();
  other.close();
  rmSync(dir, { recursive: true, force: true });
});

const countItems = (db: Database.Database) => db.prepare("SELECT count(*) AS n FROM items").pluck().get() as number;

describe("read windows", () => {
  it("the reads of one turn see one snapshot: another connection's commit shows from the next turn on, and is noted once", async () => {
    let noted = 0;
    const windows = createReadWindows(server, () => noted++);
    windows.enter();
    expect(countItems(server)).toBe(0);
    other.prepare("INSERT INTO items (name) VALUES ('a')").run();
    windows.enter();
    expect(countItems(server)).toBe(0);
    expect(noted).toBe(0);
    await nextTurn();
    expect(server.inTransaction).toBe(false);
    windows.enter();
    expect(noted).toBe(1);
    expect(countItems(server)).toBe(1);
    windows.enter();
    expect(noted).toBe(1);
    await nextTurn();
    windows.enter();
    expect(noted).toBe(1);
    windows.close();
  });

  it("close ends the window at once, so this connection can write, and a window opens again afterwards", () => {
    const windows = createReadWindows(server, () => undefined);
    windows.enter();
    expect(server.inTransaction).toBe(true);
    windows.close();
    expect(server.inTransaction).toBe(false);
    server.transaction(() => server.prepare("INSERT INTO items (name) VALUES ('b')").run()).immediate();
    windows.close();
    windows.enter();
    expect(server.inTransaction).toBe(true);
    expect(countItems(server)).toBe(1);
    windows.close();
  });

  it("counts other connections' commits as SQLite does, and not this connection's own", async () => {
    let noted = 0;
    const windows = createReadWindows(server, () => noted++);
    const before = windows.otherCommitsSeen();
    server.prepare("INSERT INTO items (name) VALUES ('own')").run();
    windows.enter();
    expect(noted).toBe(0);
    expect(windows.otherCommitsSeen()).toBe(before);
    windows.close();
    other.prepare("INSERT INTO items (name) VALUES ('theirs')").run();
    windows.enter();
    expect(noted).toBe(1);
    expect(windows.otherCommitsSeen()).not.toBe(before);
    windows.close();
  });

  it("wrapped reads open a window before they run and keep their answers and arguments", async () => {
    const windows = createReadWindows(server, () => undefined);
    const reads = insideReadWindows(
      {
        async inTransaction(label: string) {
          return `${label}:${server.inTransaction}`;
        },
      },
      windows,
    );
    await expect(reads.inTransaction("x")).resolves.toBe("x:true");
    await nextTurn();
    expect(server.inTransaction).toBe(false);
  });
});
