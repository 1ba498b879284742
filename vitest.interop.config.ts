import { defineConfig } from "vitest/config";

// `npm run test:interop`: clients nobody here wrote, against a real server.
export default defineConfig({
  test: {
    include: ["test/interop/**/*.interop.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
  },
});
