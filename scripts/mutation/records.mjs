// Several groups' records (Stryker's incremental files) as one, and one back into several, so that
// `npm run test:mutation` tests every stale group in ONE Stryker run: each run starts with a dry run of the whole suite
// with coverage (minutes on two cores), which would otherwise be paid once per group.
//
// Test ids are numbers Stryker gives per run, so two records' ids name different tests: the merged record numbers
// every test anew, by the key Stryker itself matches tests on (file and name; the vitest runner reports no location).
// A test file that the records hold in different versions keeps one version: the one on disk if a record has it.
// The other records' references to that file's tests are dropped, so their mutants are tested again — which is what
// Stryker does with the tests of a changed file (a test without location spans its whole file).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const keyOf = (path, test) => `${path}\n${test.name}`;

/** The records (objects as Stryker writes them) as one record; root is where the current test files are read. */
export function mergeRecords(root, records) {
  if (records.length === 0) throw new Error("mergeRecords needs at least one record");
  const current = (path) => (existsSync(join(root, path)) ? readFileSync(join(root, path), "utf8") : undefined);

  /** For each test file, the version kept: the one on disk when a record holds it, else the first record's. */
  const keptSource = new Map();
  for (const record of records) {
    for (const [path, { source }] of Object.entries(record.testFiles ?? {})) {
      if (!keptSource.has(path) || source === current(path)) keptSource.set(path, source);
    }
  }

  const newIds = new Map();
  const testFiles = {};
  /** Per record, its test id → the merged id; a test whose file version was not kept has none. */
  const translations = records.map((record) => {
    const translate = new Map();
    for (const [path, { source, tests }] of Object.entries(record.testFiles ?? {})) {
      if (source !== keptSource.get(path)) continue;
      testFiles[path] ??= { source, tests: [] };
      for (const test of tests) {
        const key = keyOf(path, test);
        if (!newIds.has(key)) {
          newIds.set(key, String(newIds.size));
          testFiles[path].tests.push({ ...test, id: newIds.get(key) });
        }
        translate.set(test.id, newIds.get(key));
      }
    }
    return translate;
  });

  const files = {};
  records.forEach((record, index) => {
    const translate = (ids) => ids?.flatMap((id) => (translations[index].has(id) ? [translations[index].get(id)] : []));
    for (const [path, file] of Object.entries(record.files)) {
      files[path] = {
        ...file,
        mutants: file.mutants.map((mutant) => ({ ...mutant, killedBy: translate(mutant.killedBy), coveredBy: translate(mutant.coveredBy) })),
      };
    }
  });
  return { ...records[0], files, testFiles };
}

/** The merged record's files of each group (groupOf: path → group name, or undefined), each with every test file. */
export function splitRecord(record, groups, groupOf) {
  return Object.fromEntries(
    groups.map((group) => [
      group,
      { ...record, files: Object.fromEntries(Object.entries(record.files).filter(([path]) => groupOf(path) === group)) },
    ]),
  );
}

/**
 * The groups to run, in runs of at most `limit` mutants each (in the order given; a group larger than the limit runs
 * alone). A dry run keeps every test's coverage of every mutant: 5 953 mutants and 3 044 tests outgrew the test
 * runner's 8 GB heap, 2 700 did not.
 */
export function batchesOf(groups, mutantsOf, limit) {
  const batches = [];
  let current = [];
  let size = 0;
  for (const group of groups) {
    const count = mutantsOf(group);
    if (current.length > 0 && size + count > limit) {
      batches.push(current);
      current = [];
      size = 0;
    }
    current.push(group);
    size += count;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
