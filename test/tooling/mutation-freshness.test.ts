// `npm run test:mutation` takes a group's score from its committed record (Stryker's incremental file) without
// running Stryker only while Stryker would reuse every mutant of it (scripts/mutation/freshness.mjs, issue 11).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { globToRegExp, mutatedFiles, staleness } from "../../scripts/mutation/freshness.mjs";

const GLOBS = ["src/rules/**/*.ts", "src/commands/[a-o]*.ts", "!src/rules/skip.ts"];
const SOURCES: Record<string, string> = {
  "src/rules/limit.ts": "export const limit = (n: number) => n > 3;\n",
  "src/rules/deep/name.ts": "export const valid = (s: string) => s.length > 0;\n",
  "src/commands/add.ts": "export const add = (a: number, b: number) => a + b;\n",
  "test/limit.test.ts": "it('limit', () => expect(limit(4)).toBe(true));\n",
  "test/name.test.ts": "it('name', () => expect(valid('a')).toBe(true));\n",
};

let root: string;
const write = (path: string, text: string) => {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
};
const recordPath = () => join(root, "record.json");

type Mutant = { id: string; status: string; killedBy?: string[]; coveredBy: string[] };

/** A record as Stryker writes it, of the sources as SOURCES has them. */
function writeRecord(mutants: Record<string, Mutant[]>, tests: Record<string, string[]>) {
  const files = Object.fromEntries(
    Object.entries(mutants).map(([path, list]) => [path, { language: "typescript", source: SOURCES[path], mutants: list }]),
  );
  const testFiles = Object.fromEntries(
    Object.entries(tests).map(([path, ids]) => [path, { source: SOURCES[path], tests: ids.map((id) => ({ id, name: id })) }]),
  );
  writeFileSync(recordPath(), JSON.stringify({ schemaVersion: "1.0", files, testFiles }));
}

/** limit.ts's mutant killed by test 1 (test 2 covers it too), name.ts's survivor covered by test 2, add.ts's uncovered. */
const TYPICAL = {
  "src/rules/limit.ts": [{ id: "1", status: "Killed", killedBy: ["1"], coveredBy: ["1", "2"] }],
  "src/rules/deep/name.ts": [{ id: "2", status: "Survived", coveredBy: ["2"] }],
  "src/commands/add.ts": [{ id: "3", status: "NoCoverage", coveredBy: [] }],
};
const TESTS = { "test/limit.test.ts": ["1"], "test/name.test.ts": ["2"] };

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gatehouse-freshness-"));
  for (const [path, text] of Object.entries(SOURCES)) write(path, text);
  writeRecord(TYPICAL, TESTS);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("the globs of stryker.config.mjs", () => {
  it("match at any depth with **, within one folder with *, and by first letter with a class", () => {
    expect(globToRegExp("src/rules/**/*.ts").test("src/rules/a/b/c.ts")).toBe(true);
    expect(globToRegExp("src/rules/**/*.ts").test("src/rules/c.ts")).toBe(true);
    expect(globToRegExp("src/*.ts").test("src/main.ts")).toBe(true);
    expect(globToRegExp("src/*.ts").test("src/store/x.ts")).toBe(false);
    expect(globToRegExp("src/commands/[a-o]*.ts").test("src/commands/create.ts")).toBe(true);
    expect(globToRegExp("src/commands/[a-o]*.ts").test("src/commands/set.ts")).toBe(false);
    expect(globToRegExp("src/*.ts").test("src/mainxts")).toBe(false);
  });

  it("select the group's files under src/ without the excluded ones", () => {
    write("src/rules/skip.ts", "export const skipped = 1;\n");
    write("src/commands/set.ts", "export const set = 1;\n");
    expect(mutatedFiles(root, GLOBS).sort()).toEqual(["src/commands/add.ts", "src/rules/deep/name.ts", "src/rules/limit.ts"]);
  });
});

describe("a group's record", () => {
  it("is up to date when no mutated file and no test that killed or covers a live mutant changed", async () => {
    expect(await staleness(root, GLOBS, recordPath())).toEqual([]);
  });

  it("is stale when there is none", async () => {
    expect(await staleness(root, GLOBS, join(root, "none.json"))).toEqual(["no record yet"]);
  });

  it("is stale when a mutated file changed", async () => {
    write("src/rules/limit.ts", "export const limit = (n: number) => n >= 3;\n");
    expect(await staleness(root, GLOBS, recordPath())).toEqual(["src/rules/limit.ts changed"]);
  });

  it("is stale when the group has a new file with something to mutate, not when it has nothing (types, constants as const)", async () => {
    write("src/rules/types.ts", "export interface Limit { n: number }\nexport type Name = string;\n");
    write("src/rules/names.ts", 'export const Names = { first: "first", second: "second" } as const;\n');
    expect(await staleness(root, GLOBS, recordPath())).toEqual([]);
    write("src/rules/more.ts", "export const more = (n: number) => n > 3;\n");
    expect(await staleness(root, GLOBS, recordPath())).toEqual(["src/rules/more.ts is new"]);
  });

  it("is stale when a recorded file is gone", async () => {
    rmSync(join(root, "src/commands/add.ts"));
    expect(await staleness(root, GLOBS, recordPath())).toEqual(["src/commands/add.ts is gone"]);
  });

  it("is stale when the test that killed a mutant changed", async () => {
    write("test/limit.test.ts", "it('limit', () => expect(limit(5)).toBe(true));\n");
    expect(await staleness(root, GLOBS, recordPath())).toEqual(["test/limit.test.ts changed"]);
  });

  it("is stale when a test covering a survivor changed", async () => {
    write("test/name.test.ts", "it('name', () => expect(valid('')).toBe(false));\n");
    expect(await staleness(root, GLOBS, recordPath())).toEqual(["test/name.test.ts changed"]);
  });

  it("stays up to date when a changed test only covered a mutant that another test killed", async () => {
    // Test 2 covers limit.ts's mutant too, but test 1 killed it: Stryker reuses a kill while its killer is unchanged.
    writeRecord({ ...TYPICAL, "src/rules/deep/name.ts": [] }, TESTS);
    write("test/name.test.ts", "it('name', () => expect(valid('')).toBe(false));\n");
    expect(await staleness(root, GLOBS, recordPath())).toEqual([]);
  });

  it("is stale when a test a mutant names is in no recorded test file", async () => {
    writeRecord({ ...TYPICAL, "src/rules/limit.ts": [{ id: "1", status: "Survived", coveredBy: ["9"] }] }, TESTS);
    expect(await staleness(root, GLOBS, recordPath())).toEqual(["test 9 is not in the record"]);
  });

  it("lists a few reasons and counts the rest", async () => {
    for (let i = 0; i < 7; i++) write(`src/rules/new-${i}.ts`, `export const n${i} = (n: number) => n > ${i};\n`);
    const reasons = await staleness(root, GLOBS, recordPath(), 5);
    expect(reasons).toHaveLength(6);
    expect(reasons[5]).toBe("and 2 more");
  });
});
