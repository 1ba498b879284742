import Database from "better-sqlite3";
import { CommanderError } from "commander";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { authenticate } from "../../../src/access/authenticate.js";
import { runCli } from "../../../src/cli/gatehouse.js";
import { dataFiles, describeSettings } from "../../../src/config.js";
import { StartupError } from "../../../src/startup/startup-error.js";
import { systemClock } from "../../../src/support/clock.js";
import { createIdGenerator } from "../../../src/support/ids.js";
import { repoRoot } from "../../support/command.js";
import { bootstrappedDataDir, modeOf, openStore, useTempRoot } from "../../startup/data-dir.js";

// The `gatehouse` command's program (src/cli/gatehouse.ts) driven in this process: runCli hands main.ts
// an outcome (serve with its flags, or lines to print) and throws CommanderError for help, version and
// usage errors (exit 2). What commander itself prints goes to stdout/stderr, captured here.
const root = useTempRoot("cli");
let dirs = 0;
const fresh = (name: string) => join(root(), `${name}-${++dirs}`);

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** Runs the command, capturing what it writes to stdout and stderr (and what it throws). */
async function run(argv: string[]) {
  const output = { stdout: "", stderr: "" };
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((output.stdout += String(chunk)), true));
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => ((output.stderr += String(chunk)), true));
  try {
    return { ...output, outcome: await runCli(argv), error: undefined };
  } catch (error) {
    return { ...output, outcome: undefined, error };
  } finally {
    vi.restoreAllMocks();
  }
}

describe("serve (the default command)", () => {
  it("hands its flags, untouched, to the configuration parser; with no command at all too", async () => {
    expect((await run([])).outcome).toEqual({ kind: "serve", argv: [] });
    expect((await run(["serve", "--port", "0", "--log-level", "debug"])).outcome).toEqual({ kind: "serve", argv: ["--port", "0", "--log-level", "debug"] });
  });
});

describe("migrate", () => {
  it("creates and migrates the database of --data-dir, writes nothing else, and says so", async () => {
    const dataDir = fresh("migrate");
    const result = await run(["migrate", "--data-dir", dataDir]);
    expect(result.outcome).toEqual({ kind: "done", lines: [`database ${dataFiles({ dataDir }).database} is migrated`] });
    // The database and the mark of its clean close, nothing else.
    expect(readdirSync(dataDir).sort()).toEqual(["gatehouse.db", "gatehouse.db-closed"]);
    const db = new Database(dataFiles({ dataDir }).database, { readonly: true });
    expect(db.prepare("SELECT count(*) FROM instances").pluck().get()).toBe(0);
    db.close();
  });

  it("takes the data dir from GATEHOUSE_DATA_DIR when no flag is given", async () => {
    const dataDir = fresh("from-env");
    vi.stubEnv("GATEHOUSE_DATA_DIR", dataDir);
    expect((await run(["migrate"])).outcome).toEqual({ kind: "done", lines: [`database ${dataFiles({ dataDir }).database} is migrated`] });
    expect(existsSync(dataFiles({ dataDir }).database)).toBe(true);
  });

  it("a database it cannot use: the StartupError reaches main.ts (which prints its one line)", async () => {
    const dataDir = fresh("corrupt");
    mkdirSync(dataDir);
    writeFileSync(dataFiles({ dataDir }).database, Buffer.alloc(8192, 1));
    const { error } = await run(["migrate", "--data-dir", dataDir]);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as StartupError).message).toMatch(/is not a database or is corrupted \(SQLITE_NOTADB\)/);
  });
});

describe("backup and restore", () => {
  it("backup prints what it wrote and where the key is to be kept; restore prints how to start the restored dir", async () => {
    const source = await bootstrappedDataDir(fresh("source"));
    const file = fresh("backup.db");
    const backup = await run(["backup", "--data-dir", source.dataDir, "--to", file]);
    const events = (await openAndCount(source.dataDir)).events;
    expect(backup.outcome).toEqual({
      kind: "done",
      lines: [
        `backup ${file}: ${events} events up to sequence ${events}`,
        `the master key is not in the backup: keep a copy of ${source.files.masterKey} apart from it; restore needs it (--master-key)`,
      ],
    });

    const restoredDir = fresh("restored");
    const restore = await run(["restore", "--from", file, "--data-dir", restoredDir, "--master-key", source.files.masterKey]);
    expect(restore.outcome).toEqual({
      kind: "done",
      lines: [`restored ${events} events (up to sequence ${events}) into ${restoredDir}; start it with: gatehouse serve --data-dir ${restoredDir}`],
    });
    expect(readFileSync(dataFiles({ dataDir: restoredDir }).masterKey, "utf8")).toBe(readFileSync(source.files.masterKey, "utf8"));
  });
});

/** How many events the data dir's database holds (the bootstrap wrote them all, one sequence each). */
async function openAndCount(dataDir: string) {
  const store = openStore(dataDir);
  try {
    return { events: await store.countEvents({}) };
  } finally {
    await store.close();
  }
}

describe("recover-admin", () => {
  it("writes a new IAM_OWNER token to admin.pat (0600) and says so; re-creating admin when it is gone", async () => {
    const source = await bootstrappedDataDir(fresh("recover"));
    rmSync(source.files.adminToken);
    const result = await run(["recover-admin", "--data-dir", source.dataDir]);
    expect(result.outcome).toEqual({ kind: "done", lines: [`wrote a new IAM_OWNER token for it to ${source.files.adminToken} (mode 0600)`] });
    expect(modeOf(statSync(source.files.adminToken))).toBe(0o600);
    const token = readFileSync(source.files.adminToken, "utf8").trim();
    expect(token).not.toBe(source.adminToken);
    const store = openStore(source.dataDir);
    try {
      const principal = await authenticate({ store, clock: systemClock, ids: createIdGenerator(), masterKey: source.masterKey, externalUrl: "" }, `Bearer ${token}`);
      expect(principal.memberships.find((m) => m.level === "instance")?.roles).toEqual(["IAM_OWNER"]);
      const admin = (await store.findUserById(principal.userId))!;
      await store.commit({
        instanceId: admin.instanceId,
        actor: "test",
        at: new Date(),
        writes: [{ kind: "token.deleteOfUser", userId: admin.id }, ...(await store.listMembershipsOfUser(admin.id)).map((m) => ({ kind: "membership.delete" as const, id: m.id })), { kind: "user.delete", id: admin.id }],
        events: [],
      });
    } finally {
      await store.close();
    }
    const recreated = await run(["recover-admin", "--data-dir", source.dataDir]);
    expect(recreated.outcome).toEqual({ kind: "done", lines: [`re-created the admin user and wrote a new IAM_OWNER token for it to ${source.files.adminToken} (mode 0600)`] });
  });

  it("when the recovery fails (no instance yet), no token file is left behind", async () => {
    const dataDir = fresh("not-bootstrapped");
    await openStore(dataDir).close();
    const { error } = await run(["recover-admin", "--data-dir", dataDir]);
    expect((error as Error).message).toBe("the database has no instance yet: start the server once, it bootstraps one");
    expect(readdirSync(dataDir).filter((name) => name.startsWith("admin.pat"))).toEqual([]);
  });
});

describe("help, version and usage errors", () => {
  it("--version prints the package version and ends with exit code 0", async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-v"]) {
      const result = await run([flag]);
      expect(result.stdout).toBe(`${version}\n`);
      expect(result.error).toMatchObject({ exitCode: 0, code: "commander.version" });
    }
  });

  it("--help lists every subcommand; serve --help lists every setting with its variable", async () => {
    const top = await run(["--help"]);
    expect(top.error).toMatchObject({ exitCode: 0 });
    for (const command of ["serve", "migrate", "backup", "restore", "recover-admin"]) expect(top.stdout).toContain(command);
    const serve = await run(["serve", "--help"]);
    expect(serve.error).toMatchObject({ exitCode: 0 });
    expect(serve.stdout).toContain(describeSettings());
  });

  it("an unknown option or a missing required option: commander's one line on stderr, exit code 2 (usage), nothing done", async () => {
    const target = fresh("never.db");
    const unknown = await run(["backup", "--data-dir", root(), "--to", target, "--bogus"]);
    expect(unknown.error).toBeInstanceOf(CommanderError);
    expect(unknown.error).toMatchObject({ exitCode: 2, code: "commander.unknownOption" });
    expect(unknown.stderr).toBe("error: unknown option '--bogus'\n");
    const missing = await run(["restore", "--from", target, "--data-dir", root()]);
    expect(missing.error).toMatchObject({ exitCode: 2, code: "commander.missingMandatoryOptionValue" });
    expect(missing.stderr).toBe("error: required option '--master-key <file>' not specified\n");
    expect(existsSync(target)).toBe(false);
  });
});

describe("import's options", () => {
  it("import --help says what the command does and each option, with the variables that also set them", async () => {
    const help = await run(["import", "--help"]);
    expect(help.error).toMatchObject({ exitCode: 0 });
    for (const text of [
      "import human users from a JSON Lines or CSV file into a running server (UserService.ImportHumanUsers)",
      "JSON Lines (one CreateHumanUserRequest in its JSON form per line, plus externalId) or, ending in .csv, CSV with a header row",
      "the server",
      "GATEHOUSE_URL",
      "a file holding a personal access token with user.write",
      "GATEHOUSE_TOKEN_FILE",
      "the organization to import into (x-service-orgid); default: the token's own",
      "a user whose user name or external id exists: fail, skip or update",
      'default: "fail"',
      "send each created user the mails CreateHumanUser would (default: none)",
      "where rejected rows go, with their errors, as JSON Lines (default: FILE.rejected.jsonl)",
      "the file's format (default: csv for .csv, else jsonl)",
      'choices: "jsonl", "csv"',
      "skip the first rows (done by an earlier run: its resume point)",
      "users per request message (at most 64 of them with plain passwords)",
    ]) {
      expect(help.stdout.replace(/\s+/g, " "), text).toContain(text);
    }
  });


  it("--batch-size is a whole number from 1 to 1000 and --from one from 0: anything else is a usage error (exit 2), nothing run", async () => {
    for (const [flag, value, range] of [
      ["--batch-size", "0", "1 to 1000"],
      ["--batch-size", "1001", "1 to 1000"],
      ["--batch-size", "1.5", "1 to 1000"],
      ["--batch-size", "x12", "1 to 1000"],
      ["--batch-size", "12x", "1 to 1000"],
      ["--from", "-1", `0 to ${Number.MAX_SAFE_INTEGER}`],
    ] as const) {
      const refused = await run(["import", "users.jsonl", flag, value]);
      expect(refused.error, `${flag} ${value}`).toMatchObject({ exitCode: 2, code: "commander.invalidArgument" });
      expect(refused.stderr).toContain(`must be an integer from ${range}`);
      expect(refused.outcome).toBeUndefined();
    }
    for (const [flag, value] of [["--batch-size", "1"], ["--batch-size", "1000"], ["--from", "0"], ["--from", "250000"]] as const) {
      expect((await run(["import", "users.jsonl", flag, value])).outcome, `${flag} ${value}`).toMatchObject({ kind: "run" });
    }
  });

  it("--on-conflict is fail, skip or update", async () => {
    const refused = await run(["import", "users.jsonl", "--on-conflict", "replace"]);
    expect(refused.error).toMatchObject({ exitCode: 2, code: "commander.invalidArgument" });
    for (const mode of ["fail", "skip", "update"]) expect((await run(["import", "users.jsonl", "--on-conflict", mode])).outcome).toMatchObject({ kind: "run" });
  });
});
