// Whether a group's committed record (test/mutation/<group>.incremental.json, Stryker's incremental file: every mutant's
// status with the source of each mutated file and of each test file) still describes the code as it is, so that
// `npm run test:mutation` can take the group's score from it without starting Stryker. Stryker's own incremental mode
// would reach the same statuses, but only after a dry run of the whole suite (minutes per group on two cores).
//
// The record is reused only when Stryker itself would reuse every mutant in it:
// - every file the group mutates today has the source recorded (a file with mutants and no record is new);
// - no recorded file has gone;
// - every test that killed a mutant, or covered one that was not killed, is in a test file whose source is unchanged.
// Stryker does not reuse a mutant in those cases either. One difference, in the conservative direction: Stryker
// re-tests a survivor when code outside the group changed which tests cover it (it learns that in the dry run); the
// record keeps it as a survivor, which can only under-state the score. Like Stryker, this does not see shared test
// helpers (test/support) or configuration change: run the affected groups with `--force` after such a change.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Instrumenter } from "@stryker-mutator/instrumenter";

/** A glob of stryker.config.mjs (`**`, `*`, `[a-o]`) as a regular expression over paths with `/`. */
export function globToRegExp(glob) {
  let pattern = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (glob.startsWith("**/", i)) {
      pattern += "(?:[^/]+/)*";
      i += 2;
    } else if (char === "*") pattern += "[^/]*";
    else if (char === "[") {
      const end = glob.indexOf("]", i);
      pattern += glob.slice(i, end + 1);
      i = end;
    } else pattern += char.replace(/[.+?^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${pattern}$`);
}

function filesUnder(root, dir) {
  const absolute = join(root, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(root, path) : [path];
  });
}

/** The files under src/ that the globs (with `!` exclusions) select, relative to root. */
export function mutatedFiles(root, globs) {
  const include = globs.filter((glob) => !glob.startsWith("!")).map(globToRegExp);
  const exclude = globs.filter((glob) => glob.startsWith("!")).map((glob) => globToRegExp(glob.slice(1)));
  return filesUnder(root, "src").filter(
    (path) => include.some((re) => re.test(path)) && !exclude.some((re) => re.test(path)),
  );
}

const quiet = () => false;
const silent = () => undefined;
const logger = { isTraceEnabled: quiet, isDebugEnabled: quiet, isInfoEnabled: quiet, isWarnEnabled: quiet, isErrorEnabled: quiet, isFatalEnabled: quiet, trace: silent, debug: silent, info: silent, warn: silent, error: silent, fatal: silent };

/**
 * Whether Stryker finds anything to mutate in a file: it records no file without mutants (types only, or constants
 * `as const`), so only its own instrumenter can tell such a file from a new one it has not seen.
 */
async function hasMutants(path, source) {
  return (await mutantsIn(path, source)) > 0;
}

/** How many mutants Stryker's instrumenter makes of one file's source. */
async function mutantsIn(path, source) {
  const result = await new Instrumenter(logger).instrument([{ name: path, content: source, mutate: true }], { plugins: null, excludedMutations: [], ignorers: [], noHeader: true });
  return result.mutants.length;
}

/** How many mutants Stryker makes of the group's files (its ignored ones too): what a run of the group carries. */
export async function mutantCount(root, globs) {
  let count = 0;
  for (const path of mutatedFiles(root, globs)) count += await mutantsIn(path, readFileSync(join(root, path), "utf8"));
  return count;
}

const read = (root, path) => (existsSync(join(root, path)) ? readFileSync(join(root, path), "utf8") : undefined);

/**
 * Why the record at recordPath does not describe the group's files and tests under root any more: an empty list when
 * it does. Each reason names a file; the list stops being useful past a few, so it is cut at `limit`.
 */
export async function staleness(root, globs, recordPath, limit = 5) {
  if (!existsSync(recordPath)) return ["no record yet"];
  const record = JSON.parse(readFileSync(recordPath, "utf8"));
  const reasons = [];
  const current = new Set(mutatedFiles(root, globs));
  /** Recorded files whose mutants are all re-tested anyway: their tests need no look. */
  const changedFiles = new Set();
  for (const path of current) {
    const entry = record.files[path];
    const source = read(root, path);
    if (entry === undefined) {
      if (await hasMutants(path, source)) reasons.push(`${path} is new`);
    } else if (entry.source !== source) {
      changedFiles.add(path);
      reasons.push(`${path} changed`);
    }
  }
  for (const path of Object.keys(record.files)) {
    if (!current.has(path)) {
      changedFiles.add(path);
      reasons.push(`${path} is gone`);
    }
  }
  const changedTestFiles = new Set(
    Object.entries(record.testFiles ?? {})
      .filter(([path, { source }]) => read(root, path) !== source)
      .map(([path]) => path),
  );
  const fileOfTest = new Map();
  for (const [path, { tests }] of Object.entries(record.testFiles ?? {})) {
    for (const test of tests) fileOfTest.set(test.id, path);
  }
  const staleTests = new Set();
  for (const [path, { mutants }] of Object.entries(record.files)) {
    if (changedFiles.has(path)) continue;
    for (const mutant of mutants) {
      const tests = mutant.status === "Killed" ? mutant.killedBy ?? [] : mutant.coveredBy ?? [];
      for (const id of tests) {
        const testFile = fileOfTest.get(id);
        if (testFile === undefined || changedTestFiles.has(testFile)) staleTests.add(testFile ?? `test ${id}`);
      }
    }
  }
  for (const testFile of staleTests) {
    reasons.push(changedTestFiles.has(testFile) ? `${testFile} changed` : `${testFile} is not in the record`);
  }
  return reasons.length > limit ? [...reasons.slice(0, limit), `and ${reasons.length - limit} more`] : reasons;
}

/** A function from a path under src/ to the group (of groups: name → globs) that mutates it, or undefined. */
export function groupOfFile(groups) {
  const patterns = Object.entries(groups).map(([group, globs]) => [group, globs.filter((glob) => !glob.startsWith("!")).map(globToRegExp)]);
  return (path) => patterns.find(([, regexps]) => regexps.some((re) => re.test(path)))?.[0];
}
