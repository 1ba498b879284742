import { configDefaults, defineConfig, mergeConfig } from "vitest/config";
import { testsOfRun } from "./stryker.config.mjs";
import base from "./vitest.config";

// The suite Stryker runs for each mutant (`npm run test:mutation`). Left out, and still run by `npm test`:
// - checks that execute no src/ code in this process: the proto comments, and test/cli/*.test.ts, whose
//   server runs as a spawned process where a mutant is never active (they would only add minutes per survivor);
// - two long property tests that touch nearly every mutant: the 20 000-input fuzz run (37 s) and the bcrypt
//   maximum-cost check (35 s) — a surviving mutant would pay for both each time. Their rules are also stated by
//   fast tests (error mapping, validation, imported-hash limits), which stay in;
// - the 4 MB-list load test: it measures that the server stays responsive, which instrumented code (every
//   expression wrapped to switch mutants) is too slow to show within a test timeout.
// Test files share one module graph per runner (isolate: false): the mutant in force is read at run time, so
// re-importing src/ for each of ~70 files would only repeat work for every mutant.
const config = mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        ...configDefaults.exclude,
        "test/proto-docs.test.ts",
        // The mutation tooling's own tests (scripts/mutation).
        "test/tooling/*.test.ts",
        "test/cli/*.test.ts",
        // The bulk import's kill -9 and resume: both servers are spawned processes.
        "test/api/import-resume.test.ts",
        // Three replica PROCESSES on one PostgreSQL database (76 s of the dry run's 360, and they cover no mutant).
        "test/postgres/mail-replicas.test.ts",
        "test/postgres/replica-guarantees.test.ts",
        "test/server/shutdown.test.ts",
        "test/fuzz/hostile-input.test.ts",
        "test/passwords/verify-max-cost.test.ts",
        "test/server/hostile-json-lists.test.ts",
      ],
      isolate: false,
    },
  }),
);
// The focused groups (the store, the wire…): only the tests that state their rules (stryker.config.mjs says why). Set
// after the merge, which would add the base's include to it.
const focusedTests = testsOfRun(process.env.GATEHOUSE_MUTATION_GROUP?.split(","));
if (focusedTests) config.test = { ...config.test, include: focusedTests };
export default config;
