// Mutation testing (issue 11): `npm run test:mutation` (scripts/mutation/run.mjs) runs Stryker for the groups of
// files below whose records are stale (several together, up to 3 000 mutants a run), then prints the score per folder
// and fails under the thresholds (scripts/mutation/score-by-folder.mjs). Stryker mutates src/, runs only the tests that
// cover each mutant (per-test coverage), and keeps what it learned in a committed incremental file per group, so a run
// after a small change re-tests only the mutants whose code or covering tests changed. The groups are small enough for
// one to end within a few hours on two cores: an interrupted run keeps nothing.
// GATEHOUSE_MUTATION_GROUP picks the group, or groups separated by commas (default: all groups' files in one run).

/**
 * The groups, each a list of globs under src/ (no `!` globs: a run of several groups takes all their globs together).
 * Together they cover every mutated file exactly once (test/tooling/mutation-groups.test.ts).
 */
export const MUTATION_GROUPS = {
  rules: ["src/domain/**/*.ts", "src/access/**/*.ts", "src/interceptors/**/*.ts"],
  // src/commands in two halves (by file name), so each half's result is kept on its own.
  "commands-a": ["src/commands/[a-o]*.ts"],
  "commands-b": ["src/commands/[p-z]*.ts"],
  // The API's services, REST gateway, reads and the top-level wiring, in four: one group of all of them (2 200 mutants)
  // took longer than a session's hours, and a group stopped before its end keeps nothing.
  api: ["src/api/**/*.ts", "src/events/**/*.ts"],
  rest: ["src/rest/**/*.ts"],
  queries: ["src/queries/**/*.ts"],
  server: ["src/*.ts"],
  // Store, support and transport code is reached by nearly every test, so a surviving mutant there re-runs hundreds
  // of tests (five minutes of one core each): groups of their own, each small enough (400-500 mutants that run) to
  // end within a session's hours on two cores. The engines' code is split from what both share, and by file.
  store: ["src/store/*.ts"],
  "store-sqlite": ["src/store/sqlite/[a-r]*.ts", "src/store/sqlite/schema/*.ts", "src/store/sqlite/statement-cache.ts", "src/store/sqlite/sqlite-[c-e]*.ts"],
  "store-sqlite-store": ["src/store/sqlite/sqlite-[f-s]*.ts"],
  "store-sqlite-writes": ["src/store/sqlite/sqlite-w*.ts"],
  "store-postgres": ["src/store/postgres/[a-o]*.ts", "src/store/postgres/schema/*.ts", "src/store/postgres/pg-[a-v]*.ts"],
  "store-postgres-writes": ["src/store/postgres/pg-w*.ts"],
  support: ["src/support/**/*.ts"],
  transport: ["src/transport/[a-i]*.ts", "src/transport/[k-z]*.ts"],
  "transport-json": ["src/transport/json-*.ts"],
  // Mail, start-up, the operator's commands and the hosted pages: one group of them (2 700 mutants) did not end in a
  // session's hours.
  notify: ["src/notify/**/*.ts"],
  startup: ["src/startup/**/*.ts"],
  cli: ["src/cli/**/*.ts"],
  pages: ["src/pages/**/*.ts"],
};

/**
 * Code that nearly every test reaches (the store, the wire, the shared support code, the process's wiring, the pages'
 * routes) is tried against the tests that state its own rules, not against the whole suite: against the whole suite a
 * surviving mutant there re-ran some two thousand tests (minutes each), a group took longer than a session's hours, and
 * any change to any test made the group stale again. The rules of such code are its own tests': a mutant that only
 * some API test notices by accident is a rule those tests do not state, and it counts as a survivor.
 */
const STORE_TESTS = [
  // The storage contract suites (one per engine) and the fault tests.
  "test/store/**/*.test.ts",
  "test/postgres/**/*.test.ts",
  "test/faults/**/*.test.ts",
  // The SQLite file's own rules (sqlite-file.ts: the clean-close marker, the page check, the snapshot copy), which the
  // server and the operator's commands use around the store rather than through it.
  "test/startup/sqlite-file.test.ts",
  "test/startup/clean-close.test.ts",
  "test/cli/in-process/backup-restore.test.ts",
];
/** The wire: every protocol's framing, limits, refusals and hang-ups, and REST's hostile input. */
const WIRE_TESTS = ["test/transport/**/*.test.ts", "test/server/**/*.test.ts", "test/rest/**/*.test.ts"];
/** The process's wiring (src/*.ts): the server's and start-up's tests, the configuration's, bootstrap's (both engines). */
const SERVER_TESTS = [
  ...WIRE_TESTS,
  "test/startup/**/*.test.ts",
  "test/postgres/**/*.test.ts",
  "test/config.test.ts",
  "test/bootstrap.test.ts",
  "test/bootstrap-failure.test.ts",
];
/**
 * The shared support code: its own tests, the password checks' (hashing, imported hashes, the verifier pool), the data
 * dir's and files' (start-up), and the call's log line and metrics (the server's and the interceptors' tests).
 */
const SUPPORT_TESTS = ["test/support/**/*.test.ts", "test/passwords/**/*.test.ts", "test/startup/**/*.test.ts", "test/server/**/*.test.ts", "test/interceptors/**/*.test.ts"];
/** Each focused group → the test files of its runs; a group not named runs against the whole mutation suite. */
export const FOCUSED_TESTS = {
  store: STORE_TESTS,
  "store-sqlite": STORE_TESTS,
  "store-sqlite-store": STORE_TESTS,
  "store-sqlite-writes": STORE_TESTS,
  "store-postgres": STORE_TESTS,
  "store-postgres-writes": STORE_TESTS,
  transport: WIRE_TESTS,
  "transport-json": WIRE_TESTS,
  server: SERVER_TESTS,
  support: SUPPORT_TESTS,
  // The hosted pages (the verification and initialization forms): their tests drive them over HTTP.
  pages: ["test/pages/**/*.test.ts"],
};
/**
 * The test files of a run of `list` (undefined: the whole mutation suite): the focused tests its groups share. run.mjs
 * runs together only groups with the same tests.
 */
export const testsOfRun = (list) => {
  const sets = new Set((list ?? []).map((group) => FOCUSED_TESTS[group]));
  return sets.size === 1 ? [...sets][0] : undefined;
};

/** The groups that mutate only folders held to 90 % (score-by-folder.mjs's FOLDER_THRESHOLDS). */
const RULE_GROUPS = new Set(["rules", "commands-a", "commands-b"]);

/** Never mutated, in any group (`!` globs). */
export const NOT_MUTATED = [
  // The process entry: argument parsing and signal wiring, exercised only through spawned processes (test/cli),
  // where a mutant is never active.
  "!src/main.ts",
  // Configuration for drizzle-kit (the migration generator), not code the server runs.
  "!src/store/sqlite/drizzle.config.ts",
  "!src/store/postgres/drizzle.config.ts",
];

/** The groups of this run: one, or several (comma-separated) whose records run.mjs merged into one. */
const groups = process.env.GATEHOUSE_MUTATION_GROUP?.split(",");
for (const group of groups ?? []) {
  if (!(group in MUTATION_GROUPS)) {
    throw new Error(`GATEHOUSE_MUTATION_GROUP must list groups of ${Object.keys(MUTATION_GROUPS).join(", ")}`);
  }
}
/** The name of the run's record and reports: a group's own, or "combined" (run.mjs splits it back into the groups). */
export const runName = (list) => (list === undefined ? "all" : list.length === 1 ? list[0] : "combined");
const name = runName(groups);
const incrementalFile = groups?.length > 1 ? `reports/mutation/${name}.incremental.json` : `test/mutation/${name}.incremental.json`;
/** All of src/ in one run: 85 %; only groups of rule folders: 90 %; any other group: none of its own. */
const groupBreak = () => (groups === undefined ? 85 : groups.every((group) => RULE_GROUPS.has(group)) ? 90 : null);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.ts" },
  plugins: ["@stryker-mutator/vitest-runner", "./scripts/mutation/live-survivors-reporter.mjs"],
  mutate: [...(groups ?? Object.keys(MUTATION_GROUPS)).flatMap((group) => MUTATION_GROUPS[group]), ...NOT_MUTATED],
  coverageAnalysis: "perTest",
  // A mutant in code that runs when a module loads would need the whole suite per mutant; Stryker reports them as
  // ignored instead (the count is printed).
  ignoreStatic: true,
  incremental: true,
  incrementalFile,
  concurrency: 2,
  // The per-test coverage of the dry run (every test's map of the mutants it reached, kept for the whole suite) and
  // the instrumented code outgrew Node's default 4 GB heap in the test runner process, then 8 GB: the whole suite's
  // dry run peaked at 8.7 GB of RSS on 2026-11-27 (each part of it alone at most 2.2), and ran out of memory with the
  // next tests. The dry run holds that map in one runner; the machine has 24 GB.
  testRunnerNodeArgs: ["--max-old-space-size=12288"],
  // The dry run (the whole suite once, with coverage) takes about 3 minutes on an idle 2-core machine; at low priority
  // beside other work it took over Stryker's default 5 and the group was lost.
  dryRunTimeoutMinutes: 30,
  timeoutMS: 20_000,
  timeoutFactor: 2,
  // Stryker sees one group per run, or the stale groups together, so its break is what their folders must each hold:
  // 90 when they are all groups of rule folders (domain, access, interceptors, commands). The 85 % over all of src/ spans every group;
  // score-by-folder.mjs checks it, with each rule folder on its own, over all the groups' reports.
  thresholds: { high: 90, low: 85, break: groupBreak() },
  reporters: ["progress", "json", "html", "live-survivors"],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
