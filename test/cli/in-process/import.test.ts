import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { OrganizationService } from "../../../gen/gatehouse/admin/v1/organization_pb.js";
import { UserService } from "../../../gen/gatehouse/admin/v1/user_pb.js";
import { runCli } from "../../../src/cli/gatehouse.js";
import { type CliIo, type ImportCommandOptions, runImport } from "../../../src/cli/import.js";
import { BCRYPT_HASH } from "../../support/import.js";
import { startTestServer, type TestServer, useTestServer } from "../../support/server.js";
import { storedRows } from "../../support/stored-rows.js";

/**
 * `gatehouse import` in the test's own process against a real server (test/cli/import.test.ts runs the command as its
 * own process): what it prints, its exit codes, and the resume point it gives when it cannot finish.
 */
const t = useTestServer();
const dir = mkdtempSync(join(tmpdir(), "gatehouse-import-in-process-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const row = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ userName: name, profile: { firstName: "In", lastName: "Process" }, email: { email: `${name}@example.com`, isEmailVerified: true }, hashedPassword: { value: BCRYPT_HASH }, ...extra });

function file(lines: string[], extension = "jsonl"): string {
  const path = join(dir, `rows-${++n}.${extension}`);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/** Runs the command with a captured terminal; `interruptAfter` presses Ctrl-C after that many writes to stdout. */
async function run(options: Partial<ImportCommandOptions> & { file: string }, interruptAfter?: { writes: number; times: number }, server: TestServer = t.server) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const listeners: (() => void)[] = [];
  const io: CliIo = {
    stdout: {
      write: (text: string) => {
        stdout.push(text);
        if (interruptAfter && stdout.length === interruptAfter.writes) for (let i = 0; i < interruptAfter.times; i++) for (const listener of listeners) listener();
      },
    },
    stderr: { write: (text: string) => stderr.push(text) },
    onInterrupt: (listener) => listeners.push(listener),
  };
  const code = await runImport(
    { url: server.url, tokenFile: join(server.dataDir, "admin.pat"), onConflict: "fail", sendInitializationMails: false, from: 0, batchSize: 1000, ...options },
    io,
  );
  return { code, stdout: stdout.join(""), stderr: stderr.join("") };
}

const users = () => t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken });
const exists = async (name: string) => (await users().listUsers({ userName: name })).users.length === 1;

describe("exit codes and what is printed", () => {
  it("0 when every row is imported; the summary counts each outcome", async () => {
    const names = [`ip-${++n}`, `ip-${++n}`];
    const result = await run({ file: file(names.map((name) => row(name))) });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toMatch(/^import: 2\/2 users · [\d,]+ users\/s · 0 errors · ETA 0:00 \(100%\)\n2 rows in 0:0\d \([\d,]+ users\/s\): 2 created, 0 updated, 0 unchanged, 0 skipped, 0 rejected\n$/);
    for (const name of names) expect(await exists(name)).toBe(true);
  });

  it("3 when rows were rejected, naming the report; SKIP and UPDATE are counted as such", async () => {
    const name = `ip-${++n}`;
    await run({ file: file([row(name)]) });
    const report = join(dir, `report-${n}.jsonl`);
    const skipped = await run({ file: file([row(name), "nope"]), onConflict: "skip", report });
    expect(skipped.code).toBe(3);
    expect(skipped.stdout).toContain(`0 created, 0 updated, 0 unchanged, 1 skipped, 1 rejected — the rejected rows and why are in ${report}`);
    const changed = { profile: { firstName: "New", lastName: "Name" }, email: { email: `${name}@example.com`, isEmailVerified: true } };
    // The second row names the same user (case aside): it meets it as the first row left it.
    const updated = await run({ file: file([row(name, changed), row(name.toUpperCase(), changed)]), onConflict: "update" });
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain("0 created, 1 updated, 1 unchanged, 0 skipped, 0 rejected");
  });

  it("writes rejected rows next to the file unless --report says where; names no report when nothing was rejected", async () => {
    const target = file([row(`ip-${++n}`), "nope"]);
    const rejected = await run({ file: target });
    expect(rejected.code).toBe(3);
    expect(rejected.stdout).toContain(`the rejected rows and why are in ${target}.rejected.jsonl`);
    expect(readFileSync(`${target}.rejected.jsonl`, "utf8")).toContain('"importError"');
    const clean = await run({ file: file([row(`ip-${++n}`)]) });
    expect(clean.code).toBe(0);
    expect(clean.stdout).not.toContain("rejected rows");
  });

  it("imports into the organization --org names (x-service-orgid)", async () => {
    const { organizationId } = await t.clients.client(OrganizationService, "connect-json-http1", { token: t.server.adminToken }).createOrganization({ name: `Import target ${++n}` });
    const name = `ip-org-${n}`;
    expect((await run({ file: file([row(name)]), org: organizationId })).code).toBe(0);
    const listed = await t.clients.client(UserService, "connect-json-http1", { token: t.server.adminToken, orgId: organizationId }).listUsers({ userName: name });
    expect(listed.users.map((user) => user.details?.resourceOwner)).toEqual([organizationId]);
  });

  it("a resumed run (--from) adds to the report of the first; a new run starts it over", async () => {
    const target = file(["nope 1", "nope 2"]);
    const report = join(dir, `resumed-${n}.jsonl`);
    await run({ file: target, report });
    expect(readFileSync(report, "utf8").trim().split("\n")).toHaveLength(2);
    await run({ file: target, report, from: 1 });
    expect(readFileSync(report, "utf8").trim().split("\n")).toHaveLength(3);
    await run({ file: target, report });
    expect(readFileSync(report, "utf8").trim().split("\n")).toHaveLength(2);
  });

  it("2 for a CSV header it cannot map, 1 for a token file it cannot read: one line, nothing sent", async () => {
    const csv = await run({ file: file(["user_name,email,colour", "ip-x,ip-x@example.com,red"], "csv") });
    expect(csv).toEqual({ code: 2, stdout: "", stderr: expect.stringMatching(/^gatehouse: unknown CSV column "colour"; the columns are: user_name, .*\n$/) as unknown as string });
    const token = await run({ file: file([row("ip-y")]), tokenFile: join(dir, "no-token") });
    expect(token.code).toBe(1);
    expect(token.stderr).toMatch(/^gatehouse: ENOENT: .*no-token'\n$/);
    expect(await exists("ip-y")).toBe(false);
  });
});

describe("the resume point", () => {
  it("is printed with the command that goes on, when the server cannot be reached (exit 1)", async () => {
    const name = `ip-${++n}`;
    const target = file([row(name)]);
    const result = await run({ file: target, url: "http://127.0.0.1:1", org: "some-org", report: join(dir, "r.jsonl"), sendInitializationMails: true, onConflict: "update" });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `not finished: rows 1 to 0 of 1 are done; resume with:\n  gatehouse import ${target} --url http://127.0.0.1:1 --token-file ${join(t.server.dataDir, "admin.pat")} --org some-org --report ${join(dir, "r.jsonl")} --send-initialization-mails --on-conflict update --from 0\n`,
    );
    expect(result.stderr).toMatch(/^gatehouse: the import failed: Unavailable: .+\n$/);
  });

  it("after Ctrl-C is where the answered rows end (exit 130); --from goes on after it without a repeat", async () => {
    const names = Array.from({ length: 300 }, () => `ip-${++n}`);
    const target = file(names.map((name) => row(name)));
    // Ctrl-C at the first progress line: what was sent is finished (at most four messages ahead), nothing more is sent.
    const stopped = await run({ file: target, batchSize: 10 }, { writes: 1, times: 1 });
    expect(stopped.code).toBe(130);
    const done = Number(/^stopped: rows 1 to (\d+) of 300 are done; resume with:$/m.exec(stopped.stdout)?.[1]);
    expect(done % 10).toBe(0);
    expect(done).toBeGreaterThanOrEqual(10);
    expect(done).toBeLessThanOrEqual(50);
    expect(stopped.stdout).toContain(`--on-conflict skip --from ${done}\n`);
    // Only the options given go into it.
    for (const absent of ["--org", "--report", "--send-initialization-mails"]) expect(stopped.stdout).not.toContain(absent);
    expect(await exists(names[done - 1]!)).toBe(true);
    expect(await exists(names[done]!)).toBe(false);
    const rest = await run({ file: target, batchSize: 10, from: done, onConflict: "fail" });
    expect(rest.code).toBe(0);
    expect(rest.stdout).toContain(`${300 - done} rows in`);
    expect(rest.stdout).toContain(`${300 - done} created`);
    expect(await exists(names.at(-1)!)).toBe(true);
  });

  it("after a second Ctrl-C, at once: the stream is given up, the resume point still holds (exit 130)", async () => {
    const names = Array.from({ length: 300 }, () => `ip-${++n}`);
    const stopped = await run({ file: file(names.map((name) => row(name))), batchSize: 10 }, { writes: 1, times: 2 });
    expect(stopped.code).toBe(130);
    const done = Number(/^not finished: rows 1 to (\d+) of 300 are done; resume with:$/m.exec(stopped.stdout)?.[1]);
    expect(done).toBeGreaterThanOrEqual(10);
    expect(done).toBeLessThan(300);
    expect(await exists(names[done - 1]!)).toBe(true);
  });
});

describe("a stream the server ends early (its lifetime)", () => {
  it("goes on in a new one: every user imported once, those the cut stream left unanswered skipped, not rejected", async () => {
    const short = await startTestServer({ config: { streamMaxLifetimeMs: 100 } });
    try {
      const total = 3000;
      const prefix = `cut-${++n}`;
      const names = Array.from({ length: total }, (_, i) => `${prefix}-${i}`);
      const result = await run({ file: file(names.map((name) => row(name))), batchSize: 10 }, undefined, short);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      const count = (what: string) => Number(new RegExp(`([\\d,]+) ${what}`).exec(result.stdout)?.[1]?.replace(/,/g, ""));
      expect(count("created") + count("skipped")).toBe(total);
      expect(count("rejected")).toBe(0);
      const [stored] = await storedRows<{ users: number; distinct_names: number }>(short, "select count(*) as users, count(distinct user_name) as distinct_names from users where user_name like ?", `${prefix}-%`);
      expect(stored).toEqual({ users: total, distinct_names: total });
      // The lifetime did end streams: the server logged more than one ImportHumanUsers call.
      const calls = short.logs.parsed().filter((line) => line["procedure"] === "/gatehouse.admin.v1.UserService/ImportHumanUsers");
      expect(calls.length).toBeGreaterThan(1);
    } finally {
      await short.dispose();
    }
  });
});

describe("gatehouse import's options, as the command line gives them", () => {
  afterEach(() => vi.unstubAllEnvs());

  /** `gatehouse …` parsed by the program main.ts runs, then the import it starts, with a captured terminal. */
  async function command(argv: string[]) {
    const outcome = await runCli(argv);
    if (outcome.kind !== "run") return expect.fail(`gatehouse ${argv.join(" ")} started no import`);
    const out: string[] = [];
    const code = await outcome.run({ stdout: { write: (text: string) => out.push(text) }, stderr: { write: (text: string) => out.push(text) }, onInterrupt: () => undefined });
    return { code, output: out.join("") };
  }

  it("takes the server and the token from GATEHOUSE_URL and GATEHOUSE_TOKEN_FILE; fails on a conflict unless --on-conflict says otherwise", async () => {
    vi.stubEnv("GATEHOUSE_URL", t.server.url);
    vi.stubEnv("GATEHOUSE_TOKEN_FILE", join(t.server.dataDir, "admin.pat"));
    const target = file([row(`cmd-${++n}`)]);
    expect(await command(["import", target])).toMatchObject({ code: 0 });
    const again = await command(["import", target, "--report", join(dir, `again-${n}.jsonl`)]);
    expect(again.code).toBe(3);
    expect(again.output).toContain("1 rejected");
    expect((await command(["import", target, "--on-conflict", "skip"])).output).toContain("1 skipped");
  });

  it("defaults to the server at http://127.0.0.1:8080 and the token in ./data/admin.pat", async () => {
    const target = file([row(`cmd-${++n}`)]);
    const noToken = await command(["import", target, "--url", t.server.url]);
    expect(noToken.code).toBe(1);
    expect(noToken.output).toContain("data/admin.pat");
    const tokenFile = join(t.server.dataDir, "admin.pat");
    const noServer = await command(["import", target, "--token-file", tokenFile]);
    expect(noServer.code).toBe(1);
    expect(noServer.output).toContain("--url http://127.0.0.1:8080 ");
  });

  it("sends the initialization mails only with --send-initialization-mails; reads a file as CSV by its name or --format", async () => {
    vi.stubEnv("GATEHOUSE_URL", t.server.url);
    vi.stubEnv("GATEHOUSE_TOKEN_FILE", join(t.server.dataDir, "admin.pat"));
    const unverified = (name: string) => JSON.stringify({ userName: name, profile: { firstName: "Mail", lastName: "Me" }, email: { email: `${name}@example.com` } });
    const [quiet, mailed] = [`cmd-${++n}`, `cmd-${++n}`];
    expect((await command(["import", file([unverified(quiet)])])).code).toBe(0);
    expect((await command(["import", file([unverified(mailed)]), "--send-initialization-mails"])).code).toBe(0);
    const mailsTo = async (name: string) => (await storedRows(t.server, "select id from outbox where recipient = ?", `${name}@example.com`)).length;
    expect(await mailsTo(quiet)).toBe(0);
    expect(await mailsTo(mailed)).toBe(1);
    const csvName = `cmd-${++n}`;
    const csv = file(["user_name,first_name,last_name,email,email_verified", `${csvName},Comma,Separated,${csvName}@example.com,true`], "txt");
    expect((await command(["import", csv, "--format", "csv"])).output).toContain("1 created");
    expect(await exists(csvName)).toBe(true);
  });
});
