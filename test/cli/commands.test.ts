import Database from "better-sqlite3";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { dataFiles, describeSettings } from "../../src/config.js";
import { freshDir, killStartedCommands, repoRoot, runGatehouse, serveGatehouse, stopGatehouse } from "../support/command.js";

const root = freshDir("commands");
afterEach(killStartedCommands);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const migrationCount = (JSON.parse(readFileSync(join(repoRoot, "src/store/sqlite/migrations/meta/_journal.json"), "utf8")) as { entries: unknown[] }).entries.length;

describe("gatehouse migrate", () => {
  it("creates and migrates a new database and exits 0 without serving; serve then starts on it", async () => {
    const dataDir = join(root, "migrated");
    const files = dataFiles({ dataDir });
    const result = await runGatehouse(["migrate", "--data-dir", dataDir]);
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: `database ${files.database} is migrated\n` });
    // Only the database (and the mark of its clean close): no bootstrap, no token, no key, no lock left behind — and
    // the command ended by itself, so nothing is listening.
    expect(readdirSync(dataDir).sort()).toEqual(["gatehouse.db", "gatehouse.db-closed"]);
    const db = new Database(files.database, { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) AS n FROM __drizzle_migrations").get()).toEqual({ n: migrationCount });
      expect(db.prepare("SELECT count(*) AS n FROM instances").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }

    // The deploy pipeline's next step: the first `serve` on the migrated data dir bootstraps it.
    const server = await serveGatehouse(dataDir);
    expect(existsSync(files.adminToken)).toBe(true);
    expect(existsSync(files.masterKey)).toBe(true);
    await stopGatehouse(server);
  });

  it("on a migrated, running data dir is a no-op that still exits 0", async () => {
    const dataDir = join(root, "running");
    const server = await serveGatehouse(dataDir);
    const result = await runGatehouse(["migrate", "--data-dir", dataDir]);
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: `database ${dataFiles({ dataDir }).database} is migrated\n` });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    await stopGatehouse(server);
  });
});

describe("--help and --version", () => {
  it("--help on the command and on every subcommand prints its usage and exits 0", async () => {
    const cases: [string[], string[]][] = [
      [["--help"], ["Usage: gatehouse [options] [command]", "serve", "migrate", "backup", "restore", "recover-admin"]],
      [["serve", "--help"], ["Usage: gatehouse serve", describeSettings()]],
      [["migrate", "--help"], ["Usage: gatehouse migrate [options]", "--data-dir <dir>", "GATEHOUSE_DATA_DIR"]],
      [["backup", "--help"], ["Usage: gatehouse backup [options]", "--to <file>", "--data-dir <dir>"]],
      [["restore", "--help"], ["Usage: gatehouse restore [options]", "--from <file>", "--master-key <file>", "--data-dir <dir>"]],
      [["recover-admin", "--help"], ["Usage: gatehouse recover-admin [options]", "--data-dir <dir>"]],
    ];
    const results = await Promise.all(cases.map(([args]) => runGatehouse(args)));
    results.forEach((result, index) => {
      const [args, expected] = cases[index]!;
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
      for (const text of expected) expect(result.stdout, args.join(" ")).toContain(text);
    });
  });

  it("--version prints the package version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string };
    const result = await runGatehouse(["--version"]);
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: `${version}\n` });
  });

  it("a usage error (unknown option, missing required option) is one line and exit 2", async () => {
    const [unknown, missing] = await Promise.all([
      runGatehouse(["backup", "--data-dir", root, "--to", join(root, "x.db"), "--bogus"]),
      runGatehouse(["backup", "--data-dir", root]),
    ]);
    expect(unknown).toMatchObject({ code: 2, stderr: "error: unknown option '--bogus'\n" });
    expect(missing).toMatchObject({ code: 2, stderr: "error: required option '--to <file>' not specified\n" });
    expect(existsSync(join(root, "x.db"))).toBe(false);
  });
});
