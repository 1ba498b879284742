import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CSV_COLUMNS } from "../../src/cli/import-csv.js";
import { BCRYPT_HASH } from "../support/import.js";
import { expectOneLineFailure, freshDir, killStartedCommands, runGatehouse, type ServingGatehouse, serveGatehouse, spawnGatehouse, stopGatehouse } from "../support/command.js";
import { eventually } from "../support/eventually.js";
import { storedRows } from "../support/stored-rows.js";

/**
 * `gatehouse import FILE` (issue 14) as an operator runs it: its own process, against a running server over gRPC, with
 * a token file. Rejected rows go to the report with their errors and can be fixed and fed back; Ctrl-C stops cleanly
 * and prints the resume point, from which the import goes on without losing or repeating a user.
 */
const root = freshDir("import-cli");
const dataDir = join(root, "data");
let server: ServingGatehouse;
beforeAll(async () => {
  server = await serveGatehouse(dataDir);
}, 60_000);
// The server serves every test of the file: commands a failed test left running are killed only at the end.
afterAll(async () => {
  await stopGatehouse(server);
  await killStartedCommands();
  rmSync(root, { recursive: true, force: true });
});

const connection = () => ["--url", server.url, "--token-file", join(dataDir, "admin.pat")];
const row = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ userName: name, profile: { firstName: "First", lastName: name }, email: { email: `${name}@example.com`, isEmailVerified: true }, hashedPassword: { value: BCRYPT_HASH }, externalId: `src-${name}`, ...extra });
const usersNamed = async (prefix: string) => storedRows<{ user_name: string; first_name: string }>({ dataDir }, "select user_name, first_name from users where user_name like ? order by user_name", `${prefix}%`);
const report = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown> & { importError: { row: number; line: number; reason: string; code: string; raw?: string } });

describe("a 100 000-row JSON Lines file with a few bad rows", () => {
  it("imports every good row, reports each bad one with its error, and takes the fixed report back", { timeout: 240_000 }, async () => {
    const prefix = "bulk-";
    const bad = new Map<number, string>([
      [7, "{ not json"],
      [5_000, row(`${prefix}5000`, { email: { email: "not an address" } })],
      [50_000, row(`${prefix}50000`, { hashedPassword: undefined, password: "short" })],
      [77_777, row(`${prefix}77777`, { nickname: "unknown field" })],
      [99_999, row(`${prefix}10`, { externalId: "another-source-id" })],
    ]);
    const lines = Array.from({ length: 100_000 }, (_, i) => bad.get(i + 1) ?? row(`${prefix}${i + 1}`));
    const file = join(root, "users.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);

    const result = await spawnGatehouse(["import", file, ...connection()]).waitForExit(200_000);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/^100,000 rows in \d+:\d\d \([\d,]+ users\/s\): 99,995 created, 0 updated, 0 unchanged, 0 skipped, 5 rejected — the rejected rows and why are in .*users\.jsonl\.rejected\.jsonl$/m);

    const reportFile = `${file}.rejected.jsonl`;
    expect(statSync(reportFile).mode & 0o777).toBe(0o600);
    const rejected = report(reportFile).sort((a, b) => a.importError.row - b.importError.row);
    expect(rejected.map((r) => [r.importError.row, r.importError.line, r.importError.reason])).toEqual([
      [7, 7, "row.malformed"],
      [5_000, 5_000, "email.invalid"],
      [50_000, 50_000, "password.policy"],
      [77_777, 77_777, "row.malformed"],
      [99_999, 99_999, "user.already_exists"],
    ]);
    expect(rejected[0]!.importError.raw).toBe("{ not json");
    expect(rejected[1]).toMatchObject({ userName: `${prefix}5000`, email: { email: "not an address" } });
    const stored = await usersNamed(prefix);
    expect(stored.length).toBe(99_995);
    expect(new Set(stored.map((user) => user.user_name)).size).toBe(99_995);

    // The report, fixed in place, is an import file: importError is dropped, the rows go in.
    const fixed = [
      row(`${prefix}7`),
      JSON.stringify({ ...rejected[1], email: { email: `${prefix}5000@example.com` } }),
      JSON.stringify({ ...rejected[2], password: "Sup3r-secret!" }),
      JSON.stringify({ ...rejected[3], nickname: undefined, profile: { firstName: "Fixed", lastName: "Row" } }),
      JSON.stringify({ ...rejected[4], userName: `${prefix}99999`, externalId: `src-${prefix}99999` }),
    ];
    writeFileSync(reportFile, `${fixed.join("\n")}\n`);
    const again = await runGatehouse(["import", reportFile, ...connection(), "--report", join(root, "again.jsonl")]);
    expect(again).toMatchObject({ code: 0, stderr: "" });
    expect(again.stdout).toContain("5 created, 0 updated, 0 unchanged, 0 skipped, 0 rejected");
    expect((await usersNamed(prefix)).length).toBe(100_000);
  });
});

describe("Ctrl-C and the resume point", () => {
  it("stops cleanly on SIGINT, prints where to go on, and the printed command finishes the import without repeats", { timeout: 180_000 }, async () => {
    const prefix = "interrupted-";
    const file = join(root, "interrupted.jsonl");
    writeFileSync(file, `${Array.from({ length: 30_000 }, (_, i) => row(`${prefix}${i + 1}`)).join("\n")}\n`);
    const running = spawnGatehouse(["import", file, ...connection(), "--batch-size", "200"]);
    await eventually(async () => (await usersNamed(prefix)).length > 2_000, { what: "the first users of the file in the database", timeoutMs: 60_000 });
    running.child.kill("SIGINT");
    const stopped = await running.waitForExit(60_000);
    expect(stopped.code).toBe(130);
    const resume = /^stopped: rows 1 to (\d+) of 30000 are done; resume with:\n {2}(gatehouse import .*)$/m.exec(stopped.stdout);
    expect(resume, stopped.stdout).not.toBeNull();
    const done = Number(resume![1]);
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(30_000);
    // Every row it calls done is in.
    expect((await usersNamed(prefix)).length).toBeGreaterThanOrEqual(done);
    expect(resume![2]).toContain(`--on-conflict skip --from ${done}`);

    const args = resume![2]!.split(" ").slice(1);
    const finished = await spawnGatehouse(args).waitForExit(120_000);
    expect(finished).toMatchObject({ code: 0, stderr: "" });
    const stored = await usersNamed(prefix);
    expect(stored.length).toBe(30_000);
    expect(new Set(stored.map((user) => user.user_name)).size).toBe(30_000);
  });
});

describe("streams the server ends early", () => {
  it("go on in a new stream, sending again what was not answered, without conflicts of its own", { timeout: 120_000 }, async () => {
    // A server whose streams last half a second (GATEHOUSE_STREAM_MAX_LIFETIME_MS): the import needs many.
    const shortDir = join(root, "short-streams");
    const short = await serveGatehouse(shortDir, ["--stream-max-lifetime-ms", "500"]);
    try {
      const prefix = "cut-";
      const file = join(root, "cut.jsonl");
      writeFileSync(file, `${Array.from({ length: 6_000 }, (_, i) => row(`${prefix}${i + 1}`)).join("\n")}\n`);
      const started = Date.now();
      const result = await runGatehouse(["import", file, "--url", short.url, "--token-file", join(shortDir, "admin.pat"), "--batch-size", "100"]);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      // It ran for longer than one stream may last, and the FAIL import saw no conflict with itself.
      expect(Date.now() - started).toBeGreaterThan(500);
      expect(result.stdout).toMatch(/: (5,\d{3}|6,000) created, 0 updated, 0 unchanged, (\d+) skipped, 0 rejected/);
      const stored = await storedRows<{ user_name: string }>({ dataDir: shortDir }, "select user_name from users where user_name like ?", `${prefix}%`);
      expect(stored.length).toBe(6_000);
      expect(new Set(stored.map((user) => user.user_name)).size).toBe(6_000);
    } finally {
      await stopGatehouse(short);
    }
  });
});

describe("CSV", () => {
  it("maps the documented columns (any spelling of the header), with quoted fields", async () => {
    const file = join(root, "people.csv");
    writeFileSync(
      file,
      [
        "\uFEFFUser Name,First_Name,lastName,nick_name,email,email_verified,phone,gender,hashed_password,external_id",
        `csv-ada,Ada,"King, Countess of Lovelace","The ""Enchantress""",csv-ada@example.com,yes,+41 44 668 18 00,female,${BCRYPT_HASH},src-ada`,
        "csv-grace,Grace,Hopper,,csv-grace@example.com,false,,,,",
        "csv-bad,Bad,Row,,csv-bad@example.com,maybe,,,,",
        "",
      ].join("\r\n"),
    );
    const result = await runGatehouse(["import", file, ...connection(), "--report", join(root, "csv-report.jsonl")]);
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("2 created, 0 updated, 0 unchanged, 0 skipped, 1 rejected");
    const [badRow] = report(join(root, "csv-report.jsonl"));
    expect(badRow).toMatchObject({ importError: { row: 3, line: 4, reason: "row.malformed" } });
    const stored = await storedRows<Record<string, unknown>>(
      { dataDir },
      "select user_name, last_name, nick_name, email_verified, phone, gender, password_hash, external_id, state from users where user_name like 'csv-%' order by user_name",
    );
    expect(stored).toEqual([
      { user_name: "csv-ada", last_name: "King, Countess of Lovelace", nick_name: 'The "Enchantress"', email_verified: 1, phone: "+41446681800", gender: 1, password_hash: BCRYPT_HASH, external_id: "src-ada", state: "active" },
      { user_name: "csv-grace", last_name: "Hopper", nick_name: "", email_verified: 0, phone: null, gender: 0, password_hash: null, external_id: null, state: "initial" },
    ]);
  });

  it("refuses a header it cannot map before sending anything (exit 2)", async () => {
    const file = join(root, "odd.csv");
    writeFileSync(file, "user_name,email,shoe_size\nodd-1,odd-1@example.com,42\n");
    const result = await runGatehouse(["import", file, ...connection()]);
    expectOneLineFailure(result, `unknown CSV column "shoe_size"; the columns are: ${CSV_COLUMNS.join(", ")}`, 2);
    expect(result.stdout).toBe("");
  });
});

describe("usage", () => {
  it("--help lists every option; a bad option value is a usage error (exit 2)", async () => {
    const help = await runGatehouse(["import", "--help"]);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    for (const option of ["Usage: gatehouse import [options] <file>", "--url <url>", "--token-file <file>", "--org <id>", "--on-conflict <mode>", "--send-initialization-mails", "--report <file>", "--from <rows>", "--batch-size <users>", "GATEHOUSE_TOKEN_FILE"]) {
      expect(help.stdout).toContain(option);
    }
    expect((await runGatehouse(["--help"])).stdout).toContain("import [options] <file>");
    const [size, mode] = await Promise.all([runGatehouse(["import", "x.jsonl", "--batch-size", "1001"]), runGatehouse(["import", "x.jsonl", "--on-conflict", "merge"])]);
    expect(size).toMatchObject({ code: 2, stderr: "error: option '--batch-size <users>' argument '1001' is invalid. must be an integer from 1 to 1000\n" });
    expect(mode.code).toBe(2);
  });
});

describe("failures", () => {
  it("a token file that cannot be read, or a server that is not there: one line, exit 1, the resume point", async () => {
    const file = join(root, "few.jsonl");
    writeFileSync(file, `${row("few-1")}\n`);
    const noToken = await runGatehouse(["import", file, "--url", server.url, "--token-file", join(root, "missing.pat")]);
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/^gatehouse: ENOENT: no such file or directory, open '.*missing\.pat'\n$/);
    const down = await runGatehouse(["import", file, "--url", "http://127.0.0.1:1", "--token-file", join(dataDir, "admin.pat")]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^gatehouse: the import failed: Unavailable: .+\n$/);
    expect(down.stdout).toContain("not finished: rows 1 to 0 of 1 are done; resume with:");
  });
});
