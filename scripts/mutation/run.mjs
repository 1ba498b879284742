// `npm run test:mutation [-- [--force] group…]`: runs Stryker for the named groups of stryker.config.mjs, or for every
// group whose committed record no longer describes its code and tests (freshness.mjs), as few runs as the runner's
// memory allows (groups together up to MUTANTS_PER_RUN mutants), then prints the score per
// folder over every group's record and fails below the thresholds. Each group's record (its incremental file) is
// rewritten when the run ends.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { FOCUSED_TESTS, MUTATION_GROUPS, NOT_MUTATED, runName } from "../../stryker.config.mjs";
import { groupOfFile, mutantCount, staleness } from "./freshness.mjs";
import { batchesOf, mergeRecords, splitRecord } from "./records.mjs";

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
const toRun = [];
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
  } else {
    console.log(`== mutation group ${group}: ${MUTATION_GROUPS[group].join(" ")}; to run because ${reasons.join(", ")}`);
    toRun.push(group);
  }
}

/**
 * Runs the groups in one Stryker run: its dry run (the whole suite with coverage) is paid once. Several groups share a
 * merged record, split back into theirs when the run ends (even when it ends under the break threshold: the record is
 * still the truth about the code). Answers whether Stryker succeeded.
 */
function runTogether(list) {
  const combined = list.length > 1 ? `reports/mutation/${runName(list)}.incremental.json` : undefined;
  if (combined !== undefined) {
    const records = list.filter((group) => existsSync(recordOf(group))).map((group) => JSON.parse(readFileSync(recordOf(group), "utf8")));
    mkdirSync(dirname(combined), { recursive: true });
    if (records.length > 0) writeFileSync(combined, JSON.stringify(mergeRecords(process.cwd(), records)));
    else rmSync(combined, { force: true });
  }
  const started = Date.now();
  console.log(`\n== mutation groups ${list.join(", ")}: one Stryker run`);
  // The tests' data dirs (os.tmpdir()) go to a RAM-backed filesystem when the machine has one: a surviving mutant
  // re-runs hundreds of tests whose every commit waits for its fsync on disk, and the cores idle meanwhile (the
  // authorization matrix alone: 40 s on disk, 22 s on /dev/shm, the same CPU time). `npm test` keeps the disk.
  const scratch = existsSync("/dev/shm") ? mkdtempSync("/dev/shm/gatehouse-mutation-") : undefined;
  // Open to every user as /tmp is (sticky): the test cluster of PostgreSQL runs as the `postgres` user in a dir there.
  if (scratch !== undefined) chmodSync(scratch, 0o1777);
  const run = spawnSync("npx", ["stryker", "run", ...(force ? ["--force"] : [])], {
    stdio: "inherit",
    env: { ...process.env, GATEHOUSE_MUTATION_GROUP: list.join(","), ...(scratch !== undefined ? { TMPDIR: scratch } : {}) },
  });
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  console.log(`== mutation groups ${list.join(", ")} took ${Math.round((Date.now() - started) / 1000)} s (exit ${run.status})`);
  if (combined !== undefined && existsSync(combined) && statSync(combined).mtimeMs >= started) {
    const parts = splitRecord(JSON.parse(readFileSync(combined, "utf8")), list, groupOfFile(MUTATION_GROUPS));
    for (const [group, record] of Object.entries(parts)) writeFileSync(recordOf(group), `${JSON.stringify(record, null, 2)}\n`);
  }
  return run.status === 0;
}

// Runs of at most MUTANTS_PER_RUN mutants (records.mjs batchesOf says why).
const MUTANTS_PER_RUN = 3_000;
const counts = new Map();
for (const group of toRun) counts.set(group, await mutantCount(process.cwd(), [...MUTATION_GROUPS[group], ...NOT_MUTATED]));
let failed = false;
// A run tries its mutants against one set of tests (stryker.config.mjs FOCUSED_TESTS): only groups tried against the
// same tests run together.
const byTests = new Map();
for (const group of toRun) byTests.set(FOCUSED_TESTS[group], [...(byTests.get(FOCUSED_TESTS[group]) ?? []), group]);
const batches = [...byTests.values()].flatMap((part) => batchesOf(part, (group) => counts.get(group), MUTANTS_PER_RUN));
for (const list of batches) {
  if (!runTogether(list)) failed = true;
}

// The records, not the HTML/JSON reports: they are committed, so the score of a clean clone is the score of its code.
const records = Object.keys(MUTATION_GROUPS).map(recordOf);
const score = spawnSync("node", ["scripts/mutation/score-by-folder.mjs", ...records], { stdio: "inherit" });
process.exit(failed || score.status !== 0 ? 1 : 0);
