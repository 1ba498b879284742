// `npm run test:mutation` runs every stale group in one Stryker run on a merged record and splits the result back
// (scripts/mutation/records.mjs, issue 11). The merge must keep exactly what Stryker would reuse from each record.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { groupOfFile } from "../../scripts/mutation/freshness.mjs";
import { batchesOf, mergeRecords, splitRecord } from "../../scripts/mutation/records.mjs";

type Mutant = { id: string; status: string; killedBy?: string[]; coveredBy?: string[] };
type Record = {
  schemaVersion: string;
  files: { [path: string]: { source: string; mutants: Mutant[] } };
  testFiles: { [path: string]: { source: string; tests: { id: string; name: string }[] } };
};

const NOW = "it('limit', () => {});\nit('name', () => {});\n";
const BEFORE = "it('limit', () => {});\n";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "gatehouse-records-"));
  mkdirSync(dirname(join(root, "test/a.test.ts")), { recursive: true });
  writeFileSync(join(root, "test/a.test.ts"), NOW);
  writeFileSync(join(root, "test/b.test.ts"), "it('b', () => {});\n");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The rules group's record: its test ids 0 and 1 are a.test.ts's two tests, as the file is now. */
const rules = (): Record => ({
  schemaVersion: "1.0",
  files: { "src/domain/limit.ts": { source: "x", mutants: [{ id: "0", status: "Killed", killedBy: ["1"], coveredBy: ["0", "1"] }] } },
  testFiles: { "test/a.test.ts": { source: NOW, tests: [{ id: "0", name: "limit" }, { id: "1", name: "name" }] } },
});

/** The api group's record, from another run: id 0 is b.test.ts's test, id 1 a.test.ts's "limit" in an older version. */
const api = (): Record => ({
  schemaVersion: "1.0",
  files: {
    "src/api/get.ts": {
      source: "y",
      mutants: [
        { id: "0", status: "Killed", killedBy: ["0"], coveredBy: ["0", "1"] },
        { id: "1", status: "Survived", coveredBy: ["1"] },
        { id: "2", status: "Ignored" },
      ],
    },
  },
  testFiles: {
    "test/b.test.ts": { source: "it('b', () => {});\n", tests: [{ id: "0", name: "b" }] },
    "test/a.test.ts": { source: BEFORE, tests: [{ id: "1", name: "limit" }] },
  },
});

const mutantsOf = (record: Record, path: string) => record.files[path]?.mutants ?? [];

/** The merged record's test names (file and name) a mutant's ids point to. */
function names(record: Record, ids: string[] | undefined) {
  const byId = new Map<string, string>();
  for (const [path, { tests }] of Object.entries(record.testFiles)) for (const test of tests) byId.set(test.id, `${path} ${test.name}`);
  return (ids ?? []).map((id) => byId.get(id));
}

describe("merging the records of several groups", () => {
  it("renumbers the tests so each id names one test, and each mutant still names its own tests", () => {
    const merged = mergeRecords(root, [rules(), api()]) as Record;
    const ids = Object.values(merged.testFiles).flatMap(({ tests }) => tests.map((test) => test.id));
    expect(new Set(ids).size).toBe(ids.length);
    const [ruleMutant] = mutantsOf(merged, "src/domain/limit.ts");
    expect(names(merged, ruleMutant?.killedBy)).toEqual(["test/a.test.ts name"]);
    expect(names(merged, ruleMutant?.coveredBy)).toEqual(["test/a.test.ts limit", "test/a.test.ts name"]);
    const [apiKilled] = mutantsOf(merged, "src/api/get.ts");
    expect(names(merged, apiKilled?.killedBy)).toEqual(["test/b.test.ts b"]);
  });

  it("keeps the version of a test file that is on disk, and drops the other record's references to its tests", () => {
    const merged = mergeRecords(root, [api(), rules()]) as Record;
    expect(merged.testFiles["test/a.test.ts"]?.source).toBe(NOW);
    const [apiKilled, apiSurvivor, apiIgnored] = mutantsOf(merged, "src/api/get.ts");
    // api's record saw a.test.ts before it changed: Stryker re-tests what those tests covered, so the merge forgets them.
    expect(names(merged, apiKilled?.coveredBy)).toEqual(["test/b.test.ts b"]);
    expect(apiSurvivor?.coveredBy).toEqual([]);
    expect(apiIgnored).toEqual({ id: "2", status: "Ignored" });
  });

  it("keeps the first record's version of a test file that changed since every record", () => {
    writeFileSync(join(root, "test/a.test.ts"), "it('other', () => {});\n");
    const merged = mergeRecords(root, [api(), rules()]) as Record;
    expect(merged.testFiles["test/a.test.ts"]?.source).toBe(BEFORE);
    expect(mutantsOf(merged, "src/domain/limit.ts")[0]?.killedBy).toEqual([]);
  });
});

describe("splitting a merged record", () => {
  it("gives each group its own files and every test file", () => {
    const merged = mergeRecords(root, [rules(), api()]) as Record;
    const groupOf = groupOfFile({ rules: ["src/domain/**/*.ts"], api: ["src/api/**/*.ts"], rest: ["src/rest/**/*.ts"] });
    const parts = splitRecord(merged, ["rules", "api"], groupOf) as { [group: string]: Record };
    expect(Object.keys(parts.rules?.files ?? {})).toEqual(["src/domain/limit.ts"]);
    expect(Object.keys(parts.api?.files ?? {})).toEqual(["src/api/get.ts"]);
    expect(parts.api?.testFiles).toEqual(merged.testFiles);
    expect(parts.rules?.schemaVersion).toBe("1.0");
  });
});

describe("the group of a file", () => {
  it("is the first group whose globs (not its exclusions) match it, or none", () => {
    const groupOf = groupOfFile({ a: ["src/x/**/*.ts", "!src/x/skip.ts"], b: ["src/*.ts"] });
    expect(groupOf("src/x/deep/file.ts")).toBe("a");
    expect(groupOf("src/app.ts")).toBe("b");
    expect(groupOf("src/y/file.ts")).toBeUndefined();
  });
});

describe("the runs of several stale groups", () => {
  const sizes: { [group: string]: number } = { a: 2_000, b: 600, c: 700, d: 3_500, e: 100 };
  it("hold the groups in order, as many as stay within the limit of mutants, and a group over it alone", () => {
    expect(batchesOf(["a", "b", "c", "d", "e"], (group) => sizes[group]!, 3_000)).toEqual([["a", "b"], ["c"], ["d"], ["e"]]);
    expect(batchesOf(["b", "c", "e"], (group) => sizes[group]!, 3_000)).toEqual([["b", "c", "e"]]);
    expect(batchesOf([], (group) => sizes[group]!, 3_000)).toEqual([]);
  });
});
