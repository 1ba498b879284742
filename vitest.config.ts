import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each file starts its own server(s) on port 0; two cores, so two files at a time.
    pool: "forks",
    maxWorkers: 2,
  },
});
