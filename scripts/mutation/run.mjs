// `npm run test:mutation [-- [--force] group…]`: runs Stryker for each group of stryker.config.mjs (all by default, in the
// order rules, commands-a, commands-b, api, storage, transport, platform), then prints the score per folder over every group's report and fails
// below the thresholds. Each group's result is written as soon as it finishes, with its incremental file.
import { spawnSync } from "node:child_process";
import { MUTATION_GROUPS } from "../../stryker.config.mjs";

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

let failed = false;
for (const group of groups) {
  const started = Date.now();
  console.log(`\n== mutation group ${group}: ${MUTATION_GROUPS[group].join(" ")}`);
  const run = spawnSync("npx", ["stryker", "run", ...(force ? ["--force"] : [])], {
    stdio: "inherit",
    env: { ...process.env, GATEHOUSE_MUTATION_GROUP: group },
  });
  console.log(`== mutation group ${group} took ${Math.round((Date.now() - started) / 1000)} s (exit ${run.status})`);
  if (run.status !== 0) failed = true;
}

const reports = Object.keys(MUTATION_GROUPS).map((group) => `reports/mutation/${group}.json`);
const score = spawnSync("node", ["scripts/mutation/score-by-folder.mjs", ...reports], { stdio: "inherit" });
process.exit(failed || score.status !== 0 ? 1 : 0);
