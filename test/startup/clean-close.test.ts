import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startGatehouse } from "../../src/app.js";
import { dataFiles, loadConfig } from "../../src/config.js";
import { openDatabase } from "../../src/startup/open-database.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { checkDatabasePagesInBackground, recordCleanClose, takeCleanClose } from "../../src/store/sqlite/sqlite-file.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { eventually } from "../support/eventually.js";
import { LogCapture } from "../support/server.js";
import { thrownBy } from "../support/thrown.js";
import { bootstrappedDataDir, damagePages, openStore, useTempRoot } from "./data-dir.js";

// Every start used to read the whole database file before the server answered (quick_check: 7 s for 5 GB here; issue
// 12, scale finding 9). Now a clean close of the file leaves a marker beside it; a server started on a file as that
// close left it answers at once and reads the pages beside it, stopping if they are damaged. Any other start — after
// a crash, a kill, a power cut, a restore, an edit — reads them first, as before; the operator's commands always do.
const root = useTempRoot("clean-close");
let dirs = 0;
const newDataDir = () => {
  const dataDir = join(root(), `d${++dirs}`);
  mkdirSync(dataDir);
  return dataDir;
};

/**
 * Damage pages as a disk might while the server is down, where nothing about the file shows it: its marker then
 * describes the damaged file (a disk's damage leaves the size and modification time as they were).
 */
function damageQuietly(database: string) {
  damagePages(database);
  recordCleanClose(database);
}

const opener = (database: string) => () => createSqliteStore({ path: database, synchronous: "NORMAL", busyTimeoutMs: 1_000 });

describe("the clean-close marker", () => {
  it("a closed store leaves it; a start takes it once", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    expect(existsSync(`${files.database}-closed`)).toBe(true);
    expect(takeCleanClose(files.database)).toBe(true);
    expect(existsSync(`${files.database}-closed`)).toBe(false);
    expect(takeCleanClose(files.database)).toBe(false);
  });

  it("does not vouch for a file changed, replaced, or with a log left beside it since, nor when unreadable", async () => {
    const cases: [string, (database: string) => void][] = [
      ["changed", (database) => damagePages(database)],
      ["replaced by a copy", (database) => {
        copyFileSync(database, `${database}.copy`);
        renameSync(`${database}.copy`, database);
      }],
      ["a log left", (database) => writeFileSync(`${database}-wal`, "frames")],
      ["an unreadable marker", (database) => writeFileSync(`${database}-closed`, "{not json")],
    ];
    for (const [what, change] of cases) {
      const { files } = await bootstrappedDataDir(newDataDir());
      change(files.database);
      expect({ what, vouched: takeCleanClose(files.database) }).toEqual({ what, vouched: false });
      expect({ what, marker: existsSync(`${files.database}-closed`) }).toEqual({ what, marker: false });
    }
  });

  it("is not left by a store whose file another connection still holds open (the log is not checkpointed away)", async () => {
    const { dataDir, files } = await bootstrappedDataDir(newDataDir());
    takeCleanClose(files.database);
    const first = openStore(dataDir);
    const second = openStore(dataDir);
    await first.close();
    expect(existsSync(`${files.database}-closed`)).toBe(false);
    await second.close();
    expect(existsSync(`${files.database}-closed`)).toBe(true);
  });
});

describe("what stands under the marker's name", () => {
  it("a link is replaced by the marker, never written through; a pipe, a huge file or a directory vouch for nothing and do not hold the start", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    const marker = `${files.database}-closed`;
    const outside = join(root(), `precious-${dirs}`);
    writeFileSync(outside, "precious");
    renameSync(marker, `${marker}.kept`);
    symlinkSync(outside, marker);
    recordCleanClose(files.database);
    expect(readFileSync(outside, "utf8")).toBe("precious");
    expect(takeCleanClose(files.database)).toBe(true);

    execFileSync("mkfifo", [marker]);
    expect(takeCleanClose(files.database)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    writeFileSync(marker, "");
    truncateSync(marker, 600 * 2 ** 20);
    expect(takeCleanClose(files.database)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    mkdirSync(marker);
    expect(takeCleanClose(files.database)).toBe(false);
    expect(statSync(marker).isDirectory()).toBe(true);
  });

  it("a marker the close cannot write (a directory in its place) leaves the close clean: no error, no marker", async () => {
    const { dataDir, files } = await bootstrappedDataDir(newDataDir());
    takeCleanClose(files.database);
    const store = openStore(dataDir);
    mkdirSync(`${files.database}-closed`);
    await store.close();
    expect(existsSync(`${files.database}-wal`)).toBe(false);
    expect(takeCleanClose(files.database)).toBe(false);
  });

  it("a modification time set back (cp -p, touch -r) does not make an edited file the one that was closed", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    const { atime, mtime } = statSync(files.database);
    damagePages(files.database);
    utimesSync(files.database, atime, mtime);
    expect(takeCleanClose(files.database)).toBe(false);
  });

  it("a database reached through a link finds the marker its close wrote", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    const link = join(root(), `link-${dirs}.db`);
    symlinkSync(files.database, link);
    expect(takeCleanClose(link)).toBe(true);
  });
});

describe("opening a cleanly closed file", () => {
  it("a server's open skips the read before it starts and hands over the check, which finds the damage", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    damageQuietly(files.database);
    let check: ((signal: AbortSignal) => Promise<void>) | undefined;
    const store = openDatabase(opener(files.database), files.database, { checkLater: (later) => (check = later) });
    await store.close();
    await expect(check!(new AbortController().signal)).rejects.toMatchObject({ code: "SQLITE_CORRUPT", message: expect.stringMatching(/^quick_check: .+/) });
  });

  it("an operator's command (no later check) reads every page first, whatever the marker says", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    damageQuietly(files.database);
    expect(thrownBy(StartupError, () => openDatabase(opener(files.database), files.database)).message).toMatch(/corrupted/);
  });

  it("after a start that was not clean the read comes first, for a server too", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    takeCleanClose(files.database);
    damagePages(files.database);
    let handedOver = false;
    expect(thrownBy(StartupError, () => openDatabase(opener(files.database), files.database, { checkLater: () => (handedOver = true) })).message).toMatch(/corrupted/);
    expect(handedOver).toBe(false);
  });
});

describe("the check beside the server", () => {
  it("a file it cannot open is no verdict on damage: SQLite's code, and a message that says so", async () => {
    const checking = checkDatabasePagesInBackground(join(root(), "missing.db"), new AbortController().signal);
    await expect(checking).rejects.toMatchObject({ code: "SQLITE_CANTOPEN", message: "the pages could not be read: SQLITE_CANTOPEN" });
  });

  it("passes an intact file, and ends when told to", async () => {
    const { files } = await bootstrappedDataDir(newDataDir());
    await checkDatabasePagesInBackground(files.database, new AbortController().signal);
    const stop = new AbortController();
    const checking = checkDatabasePagesInBackground(files.database, stop.signal);
    stop.abort(new Error("stopping"));
    await expect(checking).rejects.toThrow("stopping");
  });

  async function startOn(dataDir: string, logs: LogCapture, onDamagedDatabase: () => void) {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const config = loadConfig([], { GATEHOUSE_PORT: String(port), GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_DB_SYNCHRONOUS: "NORMAL", GATEHOUSE_MASTER_KEY_FILE: dataFiles({ dataDir }).masterKey });
    return startGatehouse({ config, logDestination: logs, onDamagedDatabase });
  }

  it("a server whose check beside it passed leaves a marker when it stops; one whose check did not, none", async () => {
    const intact = await bootstrappedDataDir(newDataDir());
    const logs = new LogCapture();
    const server = await startOn(intact.dataDir, logs, () => expect.fail("an intact file was found damaged"));
    await eventually(() => logs.parsed().some((line) => line.msg === "database pages checked: intact"), { what: "the check beside the server" });
    await server.close();
    expect(existsSync(`${intact.files.database}-closed`)).toBe(true);

    const damaged = await bootstrappedDataDir(newDataDir());
    damageQuietly(damaged.files.database);
    let stopsFor = 0;
    const unchecked = await startOn(damaged.dataDir, new LogCapture(), () => stopsFor++);
    await eventually(() => stopsFor === 1, { what: "the damage found beside the server" });
    await unchecked.close();
    expect(existsSync(`${damaged.files.database}-closed`)).toBe(false);
  });

  it("a server that read every page before it answered (no marker at its start) leaves a marker when it stops", async () => {
    const { dataDir, files } = await bootstrappedDataDir(newDataDir());
    // As after a crash: no marker, so the start reads the pages first and nothing is left to check beside the server.
    takeCleanClose(files.database);
    expect(existsSync(`${files.database}-closed`)).toBe(false);
    const server = await startOn(dataDir, new LogCapture(), () => expect.fail("an intact file was found damaged"));
    await server.close();
    expect(existsSync(`${files.database}-closed`)).toBe(true);
  });

  it("a page read before the server answers (the master key's probe) that is damaged fails the start with the corrupted-file line, and gives the data dir back", async () => {
    const { dataDir, files } = await bootstrappedDataDir(newDataDir());
    damagePages(files.database, "master_key_probe", 1);
    recordCleanClose(files.database);
    const failed = await startOn(dataDir, new LogCapture(), () => expect.fail("no server should run")).then(
      () => expect.fail("the start succeeded"),
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(StartupError);
    expect((failed as Error).message).toMatch(/is corrupted .*restore it from a backup/);
    // SQLite's own error stays attached (main.ts prints one line; the debug log and a debugger get the rest).
    expect((failed as Error).cause).toMatchObject({ code: expect.stringMatching(/^SQLITE_CORRUPT/) });
    expect(existsSync(join(dataDir, "gatehouse.lock"))).toBe(false);
  });

  it("a started server on a quietly damaged file answers, then logs the damage as fatal and stops", async () => {
    const { dataDir, files } = await bootstrappedDataDir(newDataDir());
    damageQuietly(files.database);
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const logs = new LogCapture();
    let stopsFor = 0;
    const config = loadConfig([], { GATEHOUSE_PORT: String(port), GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_DB_SYNCHRONOUS: "NORMAL", GATEHOUSE_MASTER_KEY_FILE: dataFiles({ dataDir }).masterKey });
    const server = await startGatehouse({ config, logDestination: logs, onDamagedDatabase: () => stopsFor++ });
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      await eventually(() => stopsFor === 1, { what: "the damage found beside the server" });
      expect(logs.parsed().find((line) => line.level === 60)).toMatchObject({ msg: expect.stringContaining("restore it from a backup"), database: files.database });
    } finally {
      await server.close();
    }
  });
});
