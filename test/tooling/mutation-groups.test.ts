// The mutation groups of stryker.config.mjs (issue 11): each file of src/ that Stryker mutates is in exactly one group,
// so the score over all groups' records counts every mutant once, and none is left out by a forgotten glob.
import { describe, expect, it } from "vitest";
import { globToRegExp, mutatedFiles } from "../../scripts/mutation/freshness.mjs";
import { CONTRACT_GROUPS, CONTRACT_TESTS, MUTATION_GROUPS, NOT_MUTATED, testsOfRun } from "../../stryker.config.mjs";

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

  it("try the store's groups against the storage contract suites and the fault tests, every other run against the whole suite", () => {
    expect([...CONTRACT_GROUPS].every((group) => group in groups && groups[group]!.every((glob) => glob.startsWith("src/store/")))).toBe(true);
    expect(Object.keys(groups).filter((group) => groups[group]!.some((glob) => glob.startsWith("src/store/")) && !CONTRACT_GROUPS.has(group))).toEqual([]);
    expect(testsOfRun(["store-sqlite", "store-postgres"])).toEqual(CONTRACT_TESTS);
    expect(testsOfRun(["store-sqlite", "transport"])).toBeUndefined();
    expect(testsOfRun(["transport"])).toBeUndefined();
    expect(testsOfRun(undefined)).toBeUndefined();
  });
});
