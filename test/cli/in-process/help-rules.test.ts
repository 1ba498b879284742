import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { backupDatabase, describeBackup } from "../../../src/cli/backup.js";
import { runCli } from "../../../src/cli/gatehouse.js";
import { restoreDatabase } from "../../../src/cli/restore.js";
import { dataFiles } from "../../../src/config.js";
import { StartupError } from "../../../src/startup/startup-error.js";
import { bootstrappedDataDir, useTempRoot } from "../../startup/data-dir.js";
import { thrownBy } from "../../support/thrown.js";

// README "the gatehouse command": every command has --help, which says what the command does and what each
// of its flags means (README's table), with --data-dir's variable and default (README Configuration:
// GATEHOUSE_DATA_DIR, ./data). And (startup-error.ts) a failed backup or restore is one StartupError line
// that keeps the underlying error as its cause, for the debug log.
const root = useTempRoot("cli-help");
let dirs = 0;
const fresh = (name: string) => join(root(), `${name}-${++dirs}`);

afterEach(() => {
  vi.restoreAllMocks();
});

/** What `gatehouse …argv` prints as help, whitespace collapsed (commander wraps lines at the terminal width). */
async function helpOf(argv: string[]): Promise<string> {
  let stdout = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  let thrown: unknown;
  try {
    await runCli(argv);
  } catch (error) {
    thrown = error;
  } finally {
    vi.restoreAllMocks();
  }
  expect(thrown).toMatchObject({ exitCode: 0, code: "commander.helpDisplayed" });
  return stdout.replace(/\s+/g, " ");
}

describe("gatehouse --help", () => {
  it("is the help of the gatehouse command: what the server is, and each subcommand with what it does", async () => {
    const help = await helpOf(["--help"]);
    expect(help).toMatch(/^Usage: gatehouse \[options\] \[command\] /);
    expect(help).toContain("identity and access management administration server");
    expect(help).toMatch(/ serve \[flags\.\.\.\] start the server \(the default\); applies pending migrations first /);
    expect(help).toMatch(/ migrate \[options\] apply pending database migrations and exit /);
    expect(help).toMatch(/ backup \[options\] write a consistent copy of the database, also while the server is running \(the master key is NOT included\) /);
    expect(help).toMatch(/ restore \[options\] restore a backup into a stopped, empty data dir, with the master key it was taken under /);
    expect(help).toMatch(/ recover-admin \[options\] issue a new IAM_OWNER token for the admin user \(re-creating it if gone\) into admin\.pat /);
  });
});

describe("each subcommand's --help names its flags, with --data-dir's variable and default", () => {
  const dataDirFlag = /--data-dir <dir> the data dir \(database, master key, admin\.pat\) \(default: "\.\/data", env: GATEHOUSE_DATA_DIR\)/;

  for (const command of ["migrate", "recover-admin"]) {
    it(command, async () => {
      const help = await helpOf([command, "--help"]);
      expect(help).toMatch(new RegExp(`^Usage: gatehouse ${command} \\[options\\] `));
      expect(help).toMatch(dataDirFlag);
    });
  }

  it("backup: --to is a new file, never overwritten", async () => {
    const help = await helpOf(["backup", "--help"]);
    expect(help).toMatch(/^Usage: gatehouse backup \[options\] /);
    expect(help).toMatch(dataDirFlag);
    expect(help).toContain("--to <file> the backup file to create (never overwritten)");
  });

  it("restore: --from is the backup, --master-key the key file of the data dir it was taken from", async () => {
    const help = await helpOf(["restore", "--help"]);
    expect(help).toMatch(/^Usage: gatehouse restore \[options\] /);
    expect(help).toMatch(dataDirFlag);
    expect(help).toContain("--from <file> the backup file ");
    expect(help).toContain("--master-key <file> the master key file of the data dir the backup was taken from");
  });
});

describe("a failed backup or restore is one StartupError line, with the underlying error as its cause", () => {
  it("backup to a file in a directory that does not exist: SQLite's reason, nothing created", async () => {
    const source = await bootstrappedDataDir(fresh("source"));
    const missingDir = fresh("no-such-dir");
    const error = thrownBy(StartupError, () => backupDatabase(source.files.database, join(missingDir, "b.db")));
    expect(error.message).toBe(`backup of ${source.files.database} failed: unable to open database: ${join(missingDir, `.${process.pid}.gatehouse-backup.partial`)}`);
    expect(error.cause).toBeInstanceOf(Error);
    expect((error.cause as { code?: string }).code).toBe("SQLITE_CANTOPEN");
    expect(existsSync(missingDir)).toBe(false);
  });

  it("describeBackup of a file that is no database: the cause is SQLite's error", () => {
    const garbage = fresh("garbage.db");
    writeFileSync(garbage, randomBytes(8192));
    const error = thrownBy(StartupError, () => describeBackup(garbage));
    expect((error.cause as { code?: string }).code).toBe("SQLITE_NOTADB");
  });

  it("restore with a key that does not open the backup: the cause is the failed opening", async () => {
    const source = await bootstrappedDataDir(fresh("source"));
    const file = fresh("backup.db");
    backupDatabase(source.files.database, file);
    const otherKey = fresh("other.key");
    writeFileSync(otherKey, `${randomBytes(32).toString("base64")}\n`);
    const dataDir = fresh("restored");
    mkdirSync(dataDir);
    const error = thrownBy(StartupError, () => restoreDatabase({ from: file, dataDir, masterKeyFile: otherKey }, dataFiles({ dataDir })));
    expect(error.message).toMatch(/does not open this backup's sealed data/);
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.cause).not.toBeInstanceOf(StartupError);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("import: takes one file, JSON Lines or CSV", async () => {
    const help = await helpOf(["import", "--help"]);
    expect(help).toMatch(/^Usage: gatehouse import \[options\] <file> /);
    expect(help).toContain("Arguments: file JSON Lines (one CreateHumanUserRequest in its JSON form per line, plus externalId) or, ending in .csv, CSV with a header row");
  });
});
