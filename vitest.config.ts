import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every test must assert something: a test without an expect fails (no vacuous tests).
    setupFiles: ["test/support/setup-assertions.ts"],
    // One real PostgreSQL cluster for the run (the storage contract runs on both engines): its URL is `inject("postgresUrl")`.
    // One temporary directory for the run, removed when it ends (test/support/temp-root-global-setup.ts).
    globalSetup: ["test/support/postgres-global-setup.ts", "test/support/temp-root-global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starts its own server(s) on port 0; two cores, so two files at a time.
    pool: "forks",
    maxWorkers: 2,
  },
});
