import { Command, CommanderError, Option } from "commander";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { dataFiles, describeSettings } from "../config.js";
import { backupDatabase } from "./backup.js";
import { addImportCommand, type RunningCommand } from "./import-command.js";
import { databaseName, migrateDataDir, recoverAdminToken } from "./maintenance.js";
import { restoreDatabase } from "./restore.js";

/** The package's version, from src/cli (tsx, tests) or dist/src/cli (the built command) alike. */
function packageVersion(): string {
  const root = new URL("/", import.meta.url);
  for (let dir = new URL(import.meta.url); dir.href !== root.href; dir = new URL("..", dir)) {
    const file = new URL("package.json", dir);
    if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  }
  // Stryker disable next-line StringLiteral: unreachable: package.json is always found above src/cli and dist/src/cli
  return "unknown";
}

/** What a subcommand hands back to main.ts, the only place with process side effects. */
export type CliOutcome = { kind: "serve"; argv: string[] } | { kind: "done"; lines: string[] } | RunningCommand;

const databaseUrlOption = () =>
  new Option("--database-url <url>", "a PostgreSQL database (postgres://…) instead of the data dir's SQLite file").env("GATEHOUSE_DATABASE_URL");

const dataDirOption = () =>
  new Option("--data-dir <dir>", "the data dir (database, master key, admin.pat)").env("GATEHOUSE_DATA_DIR").default("./data");

/**
 * The `gatehouse` command. `serve` (the default) parses its flags with the settings table in
 * config.ts, so every GATEHOUSE_* variable has its flag and its error names where the value came from.
 */
export async function runCli(argv: string[]): Promise<CliOutcome> {
  // Stryker disable next-line ObjectLiteral,StringLiteral,ArrayDeclaration: never returned: every action sets it, and help, version and usage errors throw
  let outcome: CliOutcome = { kind: "done", lines: [] };
  const program = new Command("gatehouse")
    .description("Gatehouse: identity and access management administration server")
    .version(packageVersion(), "-v, --version")
    // Commander exits 1 on a usage error (unknown option, missing required option); the command's
    // contract is 2 for usage, as for a bad setting, and 1 for a failure.
    .exitOverride((error) => {
      throw error.exitCode === 0 ? error : new CommanderError(2, error.code, error.message);
    });

  program
    .command("serve", { isDefault: true })
    .description("start the server (the default); applies pending migrations first")
    .allowUnknownOption()
    .allowExcessArguments()
    .argument("[flags...]")
    .addHelpText("after", `\nFlags (each also an environment variable; a flag wins):\n${describeSettings()}`)
    .action((flags: string[]) => {
      outcome = { kind: "serve", argv: flags };
    });

  program
    .command("migrate")
    .description("apply pending database migrations and exit (for deploy pipelines)")
    .addOption(dataDirOption())
    .addOption(databaseUrlOption())
    .action(async (options: { dataDir: string; databaseUrl?: string }) => {
      const target = { dataDir: resolve(options.dataDir), ...(options.databaseUrl !== undefined ? { databaseUrl: options.databaseUrl } : {}) };
      await migrateDataDir(target);
      outcome = { kind: "done", lines: [`database ${databaseName(target)} is migrated`] };
    });

  program
    .command("backup")
    .description("write a consistent copy of the database, also while the server is running (the master key is NOT included)")
    .addOption(dataDirOption())
    .requiredOption("--to <file>", "the backup file to create (never overwritten)")
    .action((options: { dataDir: string; to: string }) => {
      const dataDir = resolve(options.dataDir);
      const summary = backupDatabase(dataFiles({ dataDir }).database, options.to);
      outcome = {
        kind: "done",
        lines: [
          `backup ${summary.file}: ${summary.events} events up to sequence ${summary.lastSequence}`,
          `the master key is not in the backup: keep a copy of ${dataFiles({ dataDir }).masterKey} apart from it; restore needs it (--master-key)`,
        ],
      };
    });

  program
    .command("restore")
    .description("restore a backup into a stopped, empty data dir, with the master key it was taken under")
    .addOption(dataDirOption())
    .requiredOption("--from <file>", "the backup file")
    .requiredOption("--master-key <file>", "the master key file of the data dir the backup was taken from")
    .action((options: { dataDir: string; from: string; masterKey: string }) => {
      const dataDir = resolve(options.dataDir);
      const summary = restoreDatabase({ from: resolve(options.from), dataDir, masterKeyFile: resolve(options.masterKey) }, dataFiles({ dataDir }));
      outcome = {
        kind: "done",
        lines: [`restored ${summary.events} events (up to sequence ${summary.lastSequence}) into ${dataDir}; start it with: gatehouse serve --data-dir ${dataDir}`],
      };
    });

  program
    .command("recover-admin")
    .description("issue a new IAM_OWNER token for the admin user (re-creating it if gone) into admin.pat")
    .addOption(dataDirOption())
    .addOption(databaseUrlOption())
    .action(async (options: { dataDir: string; databaseUrl?: string }) => {
      const result = await recoverAdminToken({ dataDir: resolve(options.dataDir), ...(options.databaseUrl !== undefined ? { databaseUrl: options.databaseUrl } : {}) });
      outcome = {
        kind: "done",
        lines: [`${result.userCreated ? "re-created the admin user and wrote" : "wrote"} a new IAM_OWNER token for it to ${result.tokenFile} (mode 0600)`],
      };
    });

  addImportCommand(program, (command) => {
    outcome = command;
  });

  await program.parseAsync(argv, { from: "user" });
  return outcome;
}
