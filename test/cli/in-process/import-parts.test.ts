import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createCsvSplitter, CsvHeaderError, csvHeader, csvRecordToJson, type RowError } from "../../../src/cli/import-csv.js";
import { createProgress, duration, summary } from "../../../src/cli/import-progress.js";
import { createReport } from "../../../src/cli/import-report.js";
import { countRows, formatOf, readRows } from "../../../src/cli/import-rows.js";

/**
 * The parts of `gatehouse import` that need no server (issue 14): CSV records and their mapping, the rows of a file,
 * the report of rejected rows, the progress on a terminal and in a log.
 */
const dir = mkdtempSync(join(tmpdir(), "gatehouse-import-parts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("CSV records", () => {
  const split = (...chunks: string[]) => {
    const splitter = createCsvSplitter();
    return [...chunks.flatMap((chunk) => splitter.push(chunk)), ...splitter.end()];
  };

  it("splits RFC 4180 text however it is cut into chunks: quotes, doubled quotes, commas and line breaks in fields, CRLF", () => {
    const text = '\uFEFFa,b,c\r\n"x, y","say ""hi""","two\nlines"\r\nplain,,last';
    const expected = [
      ["a", "b", "c"],
      ["x, y", 'say "hi"', "two\nlines"],
      ["plain", "", "last"],
    ];
    expect(split(text)).toEqual(expected);
    for (let cut = 1; cut < text.length; cut++) expect(split(text.slice(0, cut), text.slice(cut))).toEqual(expected);
    expect(split("a,b\n")).toEqual([["a", "b"]]);
    expect(split("")).toEqual([]);
    // A quoted first field of the text; a quote inside an unquoted field is a character; a last record ending in an
    // empty field (no line break after it).
    expect(split('"a",b\n')).toEqual([["a", "b"]]);
    expect(split('a"b,c\n')).toEqual([['a"b', "c"]]);
    expect(split("x\na,")).toEqual([["x"], ["a", ""]]);
  });

  it("maps a header in any spelling, and refuses unknown, repeated or missing columns", () => {
    expect(csvHeader(["User Name", "EMAIL", "first-name", "externalId"])).toEqual(["user_name", "email", "first_name", "external_id"]);
    expect(() => csvHeader(["user_name", "email", "age"])).toThrow(CsvHeaderError);
    expect(() => csvHeader(["user_name", "email", "Email"])).toThrow("the CSV column email appears twice");
    expect(() => csvHeader(["user_name", "first_name"])).toThrow("the CSV header has no email column");
    expect(() => csvHeader(["email"])).toThrow("the CSV header has no user_name column");
  });

  it("makes a record the JSON of CreateHumanUserRequest: empty cells left out, flags and gender read, one IDP link", () => {
    const columns = csvHeader(["user_name", "first_name", "last_name", "email", "email_verified", "phone", "phone_verified", "gender", "password", "hashed_password", "password_change_required", "otp_code", "idp_config_id", "idp_external_user_id", "idp_display_name", "external_id"]);
    expect(csvRecordToJson(columns, ["ada", "Ada", "King", "ada@example.com", "TRUE", "+41 44", "1", "Female", "", "$2b$x", "yes", "JBSWY3DP", "idp-1", "ada-at-idp", "Ada at IdP", "src-1"])).toEqual({
      userName: "ada",
      profile: { firstName: "Ada", lastName: "King", gender: "GENDER_FEMALE" },
      email: { email: "ada@example.com", isEmailVerified: true },
      phone: { phone: "+41 44", isPhoneVerified: true },
      hashedPassword: { value: "$2b$x" },
      passwordChangeRequired: true,
      otpCode: "JBSWY3DP",
      idps: [{ configId: "idp-1", externalUserId: "ada-at-idp", displayName: "Ada at IdP" }],
      externalId: "src-1",
    });
    expect(csvRecordToJson(columns, ["b", "", "", "b@example.com", "no", "", "", "gender_unspecified", "Pw-1234!", "", "0", "", "", "", "", ""])).toEqual({
      userName: "b",
      profile: {},
      email: { email: "b@example.com" },
      password: "Pw-1234!",
    });
    expect(() => csvRecordToJson(columns, ["too", "short"])).toThrow("the row has 2 fields, the header 16");
    expect(() => csvRecordToJson(columns, ["c", "", "", "c@example.com", "maybe", "", "", "", "", "", "", "", "", "", "", ""])).toThrow(/email_verified must be true or false/);
    expect(() => csvRecordToJson(columns, ["c", "", "", "c@example.com", "", "", "", "robot", "", "", "", "", "", "", "", ""])).toThrow(/gender must be female, male, diverse or empty/);
  });

  it("reads true/false, 1/0, yes/no as flags, and names the column of a cell it cannot read (the report's field)", () => {
    const columns = csvHeader(["user_name", "email", "email_verified", "gender", "phone", "phone_verified", "password_change_required"]);
    const flags = (value: string) => csvRecordToJson(columns, ["u", "u@example.com", value, "", "+41 44", value, value]);
    expect(flags("false")).toMatchObject({ email: { email: "u@example.com" }, phone: { phone: "+41 44" } });
    expect(flags("false")).not.toHaveProperty("passwordChangeRequired");
    expect(flags("true")).toMatchObject({ email: { isEmailVerified: true }, phone: { isPhoneVerified: true }, passwordChangeRequired: true });
    const fieldOf = (record: string[]) => {
      try {
        csvRecordToJson(columns, record);
      } catch (error) {
        return (error as RowError).field;
      }
      return expect.fail("the record was read");
    };
    expect(fieldOf(["u", "u@example.com", "maybe", "", "", "", ""])).toBe("email_verified");
    expect(fieldOf(["u", "u@example.com", "", "robot", "", "", ""])).toBe("gender");
    expect(fieldOf(["u", "u@example.com", "", "", "+41 44", "maybe", ""])).toBe("phone_verified");
    expect(fieldOf(["u", "u@example.com", "", "", "", "", "maybe"])).toBe("password_change_required");
    expect(fieldOf(["u", "u@example.com"])).toBe("row");
  });

  it("maps every profile column; reads flags and genders in any case and with blanks around; an empty flag is false", () => {
    const columns = csvHeader(["user_name", "email", "email_verified", "nick_name", "display_name", "preferred_language", "gender", "phone", "phone_verified"]);
    const profileOf = (gender: string) => (csvRecordToJson(columns, ["u", "u@example.com", "", "", "", "", gender, "", ""])["profile"] as { gender?: string }).gender;
    expect(csvRecordToJson(columns, ["u", "u@example.com", " Yes ", "Ada", "Ada L.", "de-CH", " male ", "+41 44 668 18 00", ""])).toEqual({
      userName: "u",
      profile: { nickName: "Ada", displayName: "Ada L.", preferredLanguage: "de-CH", gender: "GENDER_MALE" },
      email: { email: "u@example.com", isEmailVerified: true },
      phone: { phone: "+41 44 668 18 00" },
    });
    expect(csvRecordToJson(columns, ["u", "u@example.com", "", "", "", "", "", "", ""])["email"]).toEqual({ email: "u@example.com" });
    expect(["female", "MALE", "Diverse", "GENDER_DIVERSE", "", "unspecified"].map(profileOf)).toEqual(["GENDER_FEMALE", "GENDER_MALE", "GENDER_DIVERSE", "GENDER_DIVERSE", undefined, undefined]);
    for (const garbage of ["XGENDER_MALE", "MALEGENDER_"]) expect(() => profileOf(garbage)).toThrow(/gender must be/);
  });

  it("sends a half-filled IDP link as it is (the server refuses it for that user), never drops it", () => {
    const columns = csvHeader(["user_name", "email", "idp_config_id", "idp_external_user_id"]);
    expect(csvRecordToJson(columns, ["u", "u@example.com", "idp-1", ""])["idps"]).toEqual([{ configId: "idp-1" }]);
    expect(csvRecordToJson(columns, ["u", "u@example.com", "", "ext-1"])["idps"]).toEqual([{ externalUserId: "ext-1" }]);
    expect(csvRecordToJson(columns, ["u", "u@example.com", "", ""])).not.toHaveProperty("idps");
  });

  it("quotes in its errors at most 40 characters of what a cell held", () => {
    const columns = csvHeader(["user_name", "email", "email_verified", "gender"]);
    const long = "x".repeat(100);
    for (const record of [["u", "u@example.com", long, ""], ["u", "u@example.com", "", long]]) {
      const message = (() => {
        try {
          csvRecordToJson(columns, record);
          return "";
        } catch (error) {
          return (error as Error).message;
        }
      })();
      expect(message).toContain(`"${"x".repeat(40)}"`);
      expect(message).not.toContain("x".repeat(41));
    }
  });

  it("ignores a byte order mark only at the start of the text, even when the first chunk is empty; keeps a last record of one empty quoted field", () => {
    expect(split("", "\uFEFFa,b")).toEqual([["a", "b"]]);
    expect(split("a,b\n", "\uFEFFc,d\n")).toEqual([["a", "b"], ["\uFEFFc", "d"]]);
    expect(split('a\n""')).toEqual([["a"], [""]]);
    expect(split('a\n"x"')).toEqual([["a"], ["x"]]);
    expect(split("a\n")).toEqual([["a"]]);
  });
});

describe("the rows of a file", () => {
  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const rows = async (file: string) => {
    const out = [];
    for await (const row of readRows(file, formatOf(file))) out.push(row);
    return out;
  };

  it("numbers JSON Lines rows (non-empty lines) and lines; drops a report's importError; refuses what is no CreateHumanUserRequest", async () => {
    const file = write(
      "rows.jsonl",
      ['{"userName":"a","email":{"email":"a@example.com"},"externalId":"x"}', "", "  ", "[1]", '{"userName":"b","importError":{"reason":"old"}}', '{"userName":"c","shoeSize":42}', '{"userName":"d","externalId":7}', "{"].join("\n"),
    );
    const read = await rows(file);
    expect(read.map((row) => [row.number, row.line, row.problem?.reason ?? "ok"])).toEqual([
      [1, 1, "ok"],
      [2, 4, "row.malformed"],
      [3, 5, "ok"],
      [4, 6, "row.malformed"],
      [5, 7, "row.malformed"],
      [6, 8, "row.malformed"],
    ]);
    expect(read[0]!.user).toMatchObject({ externalId: "x", user: { userName: "a", email: { email: "a@example.com" } } });
    expect(read[2]!.json).toEqual({ userName: "b" });
    expect(read[3]!.problem?.message).toContain("shoeSize");
    expect(read[4]!.problem).toMatchObject({ field: "external_id", message: "externalId must be a string" });
    expect(read[5]).toMatchObject({ raw: "{", problem: { message: "the line is not JSON" } });
    expect(await countRows(file, "jsonl")).toBe(6);
  });

  it("skips the rows an earlier run did (--from) without reading them, numbering on", async () => {
    const jsonl = write("from.jsonl", ['{"userName":"a"}', "not json at all", "", '{"userName":"c"}', '{"userName":"d"}'].join("\n"));
    const after = [];
    for await (const row of readRows(jsonl, "jsonl", 2)) after.push([row.number, row.line, row.json?.["userName"]]);
    expect(after).toEqual([
      [3, 4, "c"],
      [4, 5, "d"],
    ]);
    const csv = write("from.csv", "user_name,email\na,a@example.com\nb,b@example.com,extra\nc,c@example.com\n");
    const csvAfter = [];
    for await (const row of readRows(csv, "csv", 2)) csvAfter.push([row.number, row.json?.["userName"], row.problem]);
    expect(csvAfter).toEqual([[3, "c", undefined]]);
  });

  it("numbers CSV rows after the header, by the line each starts on, and counts them", async () => {
    const file = write("rows.csv", 'user_name,email,nick_name\na,a@example.com,"two\nlines"\n\nb,b@example.com,x\n');
    const read = await rows(file);
    expect(read.map((row) => [row.number, row.line, row.json?.["userName"]])).toEqual([
      [1, 2, "a"],
      [2, 5, "b"],
    ]);
    expect(await countRows(file, "csv")).toBe(2);
  });

  it("skips only blank CSV lines: a row whose first cell is empty, or that has one cell, is a row (and the report gets it as written)", async () => {
    const file = write("blanks.csv", "user_name,email\n   \n,nobody@example.com\nlonely\nz,z@example.com\n");
    const read = await rows(file);
    expect(read.map((row) => [row.number, row.line, row.problem?.field ?? "ok"])).toEqual([
      [1, 3, "ok"],
      [2, 4, "row"],
      [3, 5, "ok"],
    ]);
    expect(read[0]!.json).toMatchObject({ userName: "", email: { email: "nobody@example.com" } });
    expect(read[1]).toMatchObject({ raw: "lonely", problem: { reason: "row.malformed", message: "the row has 1 fields, the header 2" } });
    expect(await countRows(file, "csv")).toBe(3);
  });

  it("gives the report a malformed CSV row as written: its cells separated by commas", async () => {
    const file = write("surplus.csv", "user_name,email\nx,x@example.com,surplus\n");
    const [row] = await rows(file);
    expect(row).toMatchObject({ raw: "x,x@example.com,surplus", problem: { reason: "row.malformed", message: "the row has 3 fields, the header 2" } });
  });

  it("reads only JSON objects as JSON Lines rows, says what else a line is, and takes CRLF line ends", async () => {
    const longKey = "k".repeat(1_000);
    const file = write("kinds.jsonl", ['{"userName":"crlf"}\r', "{\r", "42", "null", "[1]", `{"${longKey}":1}`].join("\n"));
    const read = await rows(file);
    expect(read.map((row) => [row.number, row.line])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
      [6, 6],
    ]);
    expect(read[0]!.json).toEqual({ userName: "crlf" });
    // What the report writes back for a line it cannot read: the line as written, without its line end.
    expect(read[1]).toMatchObject({ raw: "{", size: 1, problem: { reason: "row.malformed", message: "the line is not JSON", field: "row" } });
    for (const row of read.slice(2, 5)) expect(row.problem).toEqual({ reason: "row.malformed", message: "the line is not a JSON object", field: "row" });
    // Not a CreateHumanUserRequest: protobuf's own reason, cut short (a hostile key does not become a huge report).
    expect(read[5]!.problem).toMatchObject({ reason: "row.malformed", field: "row", message: expect.stringMatching(/^not a CreateHumanUserRequest: /) });
    expect(read[5]!.problem!.message.length).toBeLessThanOrEqual(330);
  });
});

describe("the report", () => {
  it("writes each rejected row as its JSON plus importError, 0600, only once a row is rejected, appending when resumed", async () => {
    const file = join(dir, "report.jsonl");
    const report = createReport(file, false);
    await report.close();
    expect(() => readFileSync(file)).toThrow();
    const error = { code: "invalid_argument", reason: "email.invalid", message: "no", fieldViolations: [{ field: "email.email", description: "no" }] };
    const first = createReport(file, false);
    await first.write({ number: 3, line: 4, size: 1, json: { userName: "a" } }, error);
    await first.write({ number: 5, line: 6, size: 1, raw: "{" }, error);
    await first.close();
    const resumed = createReport(file, true);
    await resumed.write({ number: 9, line: 9, size: 1, json: { userName: "z" } }, error);
    await resumed.close();
    expect(resumed.count()).toBe(1);
    expect(readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as unknown)).toEqual([
      { userName: "a", importError: { row: 3, line: 4, ...error } },
      { importError: { row: 5, line: 6, ...error, raw: "{" } },
      { userName: "z", importError: { row: 9, line: 9, ...error } },
    ]);
  });
});

describe("progress", () => {
  const counts = (done: number, rejected = 0) => ({ done, total: 1000, created: done, updated: 0, unchanged: 0, skipped: 0, rejected });

  it("on a terminal: a bar redrawn in place at most five times a second, with users/s, done/total, errors and ETA", () => {
    const written: string[] = [];
    let clock = 0;
    const progress = createProgress({ write: (text: string) => written.push(text), isTTY: true, columns: 120 }, 0, () => clock);
    clock = 1000;
    progress.update(counts(100));
    clock = 1100;
    progress.update(counts(120));
    clock = 2000;
    progress.update(counts(200, 2));
    expect(written).toEqual([
      "\r\u001b[K[###...........................]  10% 100/1,000 users · 100 users/s · 0 errors · ETA 0:09",
      "\r\u001b[K[######........................]  20% 200/1,000 users · 100 users/s · 2 errors · ETA 0:08",
    ]);
    progress.clear();
    expect(written.at(-1)).toBe("\r\u001b[K");
  });

  it("measures the rate over the last five seconds exactly: from the last update at least five seconds old", () => {
    const written: string[] = [];
    let clock = 0;
    const progress = createProgress({ write: (text: string) => written.push(text), isTTY: true, columns: 120 }, 0, () => clock);
    const done = [10, 20, 30, 40, 50, 100, 110, 210];
    done.forEach((value, i) => {
      clock = (i + 1) * 1000;
      progress.update(counts(value));
    });
    // From 3 s (30 done) to 8 s (210 done): 36 users/s — not over six seconds (32), nor over the last one (100).
    expect(written.at(-1)).toContain("· 36 users/s ·");
  });

  it("clears only a bar it drew, once: not before the first one, not twice, never in a log", () => {
    const tty: string[] = [];
    const bar = createProgress({ write: (text: string) => tty.push(text), isTTY: true, columns: 120 }, 0, () => 0);
    bar.clear();
    expect(tty).toEqual([]);
    bar.update(counts(1));
    bar.clear();
    bar.clear();
    expect(tty.filter((text) => text === "\r\u001b[K")).toHaveLength(1);
    const log: string[] = [];
    createProgress({ write: (text: string) => log.push(text) }, 0, () => 0).clear();
    expect(log).toEqual([]);
  });

  it("elsewhere: a plain line every five seconds, and nothing to clear", () => {
    const written: string[] = [];
    let clock = 0;
    const progress = createProgress({ write: (text: string) => written.push(text) }, 500, () => clock);
    for (clock = 1000; clock <= 12_000; clock += 1000) progress.update(counts(500 + clock / 100));
    expect(written).toEqual(["import: 510/1,000 users · 10 users/s · 0 errors · ETA 0:49 (51%)\n", "import: 560/1,000 users · 10 users/s · 0 errors · ETA 0:44 (56%)\n", "import: 610/1,000 users · 10 users/s · 0 errors · ETA 0:39 (61%)\n"]);
    progress.clear();
    expect(written).toHaveLength(3);
  });

  it("shows the rate of the last five seconds, so the ETA follows a rate that changes; no rate yet is an ETA of –", () => {
    const written: string[] = [];
    let clock = 0;
    const progress = createProgress({ write: (text: string) => written.push(text) }, 0, () => clock);
    // 100 users/s for ten seconds, then 10 users/s (of 2 000 users): a line every five seconds.
    const of2000 = (done: number) => ({ ...counts(done), total: 2000 });
    for (clock = 1000; clock <= 10_000; clock += 1000) progress.update(of2000(clock / 10));
    for (clock = 11_000; clock <= 16_000; clock += 1000) progress.update(of2000(1000 + (clock - 10_000) / 100));
    expect(written.at(-1)).toBe("import: 1,060/2,000 users · 10 users/s · 0 errors · ETA 1:34 (53%)\n");

    const still: string[] = [];
    clock = 0;
    const stalled = createProgress({ write: (text: string) => still.push(text) }, 0, () => clock);
    stalled.update(counts(0));
    expect(still).toEqual(["import: 0/1,000 users · 0 users/s · 0 errors · ETA – (0%)\n"]);
  });

  it("on a terminal keeps the bar between 10 and 30 characters whatever its width, and shows an empty file as done", () => {
    const bar = (columns: number | undefined, total = 1000) => {
      const written: string[] = [];
      const progress = createProgress({ write: (text: string) => written.push(text), isTTY: true, ...(columns === undefined ? {} : { columns }) }, 0, () => 1000);
      progress.update({ ...counts(0), total });
      return /\[([#.]*)\]/.exec(written[0]!)![1]!;
    };
    expect(bar(20)).toHaveLength(10);
    expect(bar(400)).toHaveLength(30);
    expect(bar(70)).toHaveLength(70 - "0/1,000 users · 0 users/s · 0 errors · ETA –".length - 10);
    expect(bar(undefined)).toHaveLength(80 - "0/1,000 users · 0 users/s · 0 errors · ETA –".length - 10);
    expect(bar(120, 0)).toMatch(/^#+$/);
  });

  it("sums up, naming the report only when rows were rejected", () => {
    expect(duration(75)).toBe("1:15");
    expect(duration(3725)).toBe("1:02:05");
    expect(summary({ ...counts(1000, 3), created: 990, skipped: 7 }, 0, 2, "r.jsonl")).toBe(
      "1,000 rows in 0:02 (500 users/s): 990 created, 0 updated, 0 unchanged, 7 skipped, 3 rejected — the rejected rows and why are in r.jsonl",
    );
    expect(summary(counts(1000), 400, 3, undefined)).toBe("600 rows in 0:03 (200 users/s): 1,000 created, 0 updated, 0 unchanged, 0 skipped, 0 rejected");
    // A report named but nothing rejected: nothing to look for there. No time elapsed: no rate.
    expect(summary(counts(10), 0, 0, "r.jsonl")).toBe("10 rows in 0:00 (0 users/s): 10 created, 0 updated, 0 unchanged, 0 skipped, 0 rejected");
  });
});
