// `npm run test:mutation [-- [--force] group…]`: runs Stryker for the named groups of stryker.config.mjs, or for each
// group (in the order of MUTATION_GROUPS: rules, commands-a, commands-b, api, rest, queries, server, store, support,
// transport, platform) whose committed record no longer describes its code and tests (freshness.mjs), then prints the score per
// folder over every group's record and fails below the thresholds. Stryker writes each group's record (its incremental
// file) as soon as the group finishes.
import { spawnSync } from "node:child_process";
import { MUTATION_GROUPS, NOT_MUTATED } from "../../stryker.config.mjs";
import { staleness } from "./freshness.mjs";

// `--force` re-tests every mutant of the named groups: Stryker's incremental mode sees changes to src/ and to the
// tests themselves, not to shared test helpers (test/support), so run the affected groups with it after such a change.
const force = process.argv.includes("--force");
const requested = process.argv.slice(2).filter((arg) => arg !== "--force");
const groups = requested.length > 0 ? requested : Object.keys(MUTATION_GROUPS);
for (const group of groups) {
  if (!(group in MUTATION_GROUPS)) {
    console.error(`unknown mutation group ${group}; the groups are ${Object.keys(MUTATION_GROUPS).join(", ")}`);
    process.exit(2);
  }
}

const recordOf = (group) => `test/mutation/${group}.incremental.json`;
let failed = false;
for (const group of groups) {
  // A group named on the command line always runs (incrementally): a new test file can kill a recorded survivor, which
  // only a run finds out. The whole set skips the groups whose records are up to date.
  const reasons = force
    ? ["--force"]
    : requested.length > 0
      ? ["it was asked for"]
      : await staleness(process.cwd(), [...MUTATION_GROUPS[group], ...NOT_MUTATED], recordOf(group));
  if (reasons.length === 0) {
    console.log(`== mutation group ${group}: its record is up to date (no mutated file or covering test changed), not re-run`);
    continue;
  }
  const started = Date.now();
  console.log(`\n== mutation group ${group}: ${MUTATION_GROUPS[group].join(" ")}; re-run because ${reasons.join(", ")}`);
  const run = spawnSync("npx", ["stryker", "run", ...(force ? ["--force"] : [])], {
    stdio: "inherit",
    env: { ...process.env, GATEHOUSE_MUTATION_GROUP: group },
  });
  console.log(`== mutation group ${group} took ${Math.round((Date.now() - started) / 1000)} s (exit ${run.status})`);
  if (run.status !== 0) failed = true;
}

// The records, not the HTML/JSON reports: they are committed, so the score of a clean clone is the score of its code.
const records = Object.keys(MUTATION_GROUPS).map(recordOf);
const score = spawnSync("node", ["scripts/mutation/score-by-folder.mjs", ...records], { stdio: "inherit" });
process.exit(failed || score.status !== 0 ? 1 : 0);
