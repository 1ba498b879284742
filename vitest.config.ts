import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Every test must assert something: a test without an expect fails (no vacuous tests).
    setupFiles: ["test/support/setup-assertions.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starts its own server(s) on port 0; two cores, so two files at a time.
    pool: "forks",
    maxWorkers: 2,
  },
});
