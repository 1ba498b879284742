// The mutation groups of stryker.config.mjs (issue 11): each file of src/ that Stryker mutates is in exactly one group,
// so the score over all groups' records counts every mutant once, and none is left out by a forgotten glob.
import { describe, expect, it } from "vitest";
import { globToRegExp, mutatedFiles } from "../../scripts/mutation/freshness.mjs";
import { FOCUSED_TESTS, MUTATION_GROUPS, NOT_MUTATED, testsOfRun } from "../../stryker.config.mjs";

const root = new URL("../..", import.meta.url).pathname;
const groups = MUTATION_GROUPS;

describe("the mutation groups", () => {
  it("put every mutated file of src/ in exactly one group", () => {
    const everyFile = mutatedFiles(root, ["src/**/*.ts", ...NOT_MUTATED]);
    const misplaced = everyFile.flatMap((path) => {
      const owners = Object.entries(groups).filter(([, globs]) => globs.some((glob) => globToRegExp(glob).test(path)));
      return owners.length === 1 ? [] : [`${path}: ${owners.map(([group]) => group).join(", ") || "no group"}`];
    });
    expect(everyFile.length).toBeGreaterThan(200);
    expect(misplaced).toEqual([]);
  });

  it("exclude nothing with `!`: several groups run together take all their globs at once", () => {
    expect(Object.values(groups).flat().filter((glob) => glob.startsWith("!"))).toEqual([]);
  });

  it("try every store group against the storage contract suites, and no group outside the store against them", () => {
    const storeTests = FOCUSED_TESTS["store"]!;
    expect(storeTests).toContain("test/store/**/*.test.ts");
    expect(storeTests).toContain("test/postgres/**/*.test.ts");
    const storeGroups = Object.keys(groups).filter((group) => groups[group]!.some((glob) => glob.startsWith("src/store/")));
    expect(storeGroups.length).toBeGreaterThan(1);
    expect(storeGroups.filter((group) => FOCUSED_TESTS[group] !== storeTests)).toEqual([]);
    expect(Object.keys(FOCUSED_TESTS).filter((group) => FOCUSED_TESTS[group] === storeTests && !storeGroups.includes(group))).toEqual([]);
  });

  it("name only existing groups as focused, and keep the rule folders' groups on the whole suite", () => {
    expect(Object.keys(FOCUSED_TESTS).filter((group) => !(group in groups))).toEqual([]);
    expect(["rules", "commands-a", "commands-b"].filter((group) => group in FOCUSED_TESTS)).toEqual([]);
  });

  it("give a run the focused tests its groups share, and the whole suite otherwise", () => {
    expect(testsOfRun(["store-sqlite", "store-postgres"])).toEqual(FOCUSED_TESTS["store"]);
    expect(testsOfRun(["transport", "transport-json"])).toEqual(FOCUSED_TESTS["transport"]);
    expect(testsOfRun(["store-sqlite", "transport"])).toBeUndefined();
    expect(testsOfRun(["store-sqlite", "rules"])).toBeUndefined();
    expect(testsOfRun(["rules"])).toBeUndefined();
    expect(testsOfRun(undefined)).toBeUndefined();
  });
});
