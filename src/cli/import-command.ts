import { type Command, InvalidArgumentError, Option } from "commander";
import { resolve } from "node:path";
import { type CliIo, type ConflictMode, type ImportCommandOptions, runImport } from "./import.js";

/** A subcommand that runs on: main.ts hands it the terminal and Ctrl-C, and exits with the code it returns. */
export interface RunningCommand {
  kind: "run";
  run(io: CliIo): Promise<number>;
}

const integer = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
  return n;
};

/** `gatehouse import FILE` (README, "Migrating users from another system"). */
export function addImportCommand(program: Command, started: (command: RunningCommand) => void): void {
  program
    .command("import")
    .description("import human users from a JSON Lines or CSV file into a running server (UserService.ImportHumanUsers)")
    .argument("<file>", "JSON Lines (one CreateHumanUserRequest in its JSON form per line, plus externalId) or, ending in .csv, CSV with a header row")
    .addOption(new Option("--url <url>", "the server").env("GATEHOUSE_URL").default("http://127.0.0.1:8080"))
    .addOption(new Option("--token-file <file>", "a file holding a personal access token with user.write").env("GATEHOUSE_TOKEN_FILE").default("./data/admin.pat"))
    .addOption(new Option("--org <id>", "the organization to import into (x-service-orgid); default: the token's own"))
    .addOption(new Option("--on-conflict <mode>", "a user whose user name or external id exists: fail, skip or update").choices(["fail", "skip", "update"]).default("fail"))
    .addOption(new Option("--send-initialization-mails", "send each created user the mails CreateHumanUser would (default: none)"))
    .addOption(new Option("--report <file>", "where rejected rows go, with their errors, as JSON Lines (default: FILE.rejected.jsonl)"))
    .addOption(new Option("--format <format>", "the file's format (default: csv for .csv, else jsonl)").choices(["jsonl", "csv"]))
    .addOption(new Option("--from <rows>", "skip the first rows (done by an earlier run: its resume point)").argParser(integer(0, Number.MAX_SAFE_INTEGER)).default(0))
    .addOption(new Option("--batch-size <users>", "users per request message (at most 64 of them with plain passwords)").argParser(integer(1, 1000)).default(1000))
    .action((file: string, flags: Omit<ImportCommandOptions, "file" | "onConflict"> & { onConflict: ConflictMode }) => {
      const options: ImportCommandOptions = { ...flags, file: resolve(file), sendInitializationMails: flags.sendInitializationMails === true };
      started({ kind: "run", run: (io) => runImport(options, io) });
    });
}
