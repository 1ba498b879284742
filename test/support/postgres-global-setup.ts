import type { TestProject } from "vitest/node";
import type { ClusterAddress } from "./postgres.js";
import { launchPostgresCluster } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's PostgreSQL cluster (test/support/postgres.ts); tests create their own databases on it (`testCluster()`). */
    postgres: ClusterAddress;
  }
}

/**
 * vitest globalSetup: one PostgreSQL cluster for the whole run, launched in the background (tests that need it wait
 * for it, others never do), its address provided to every test file; stopped and removed when the run ends, whether
 * the tests passed or not — also when the run is interrupted or the process exits.
 */
export default async function setup(project: TestProject) {
  const cluster = await launchPostgresCluster();
  const stopOnSignal = (signal: NodeJS.Signals) => {
    cluster.stopNow();
    process.kill(process.pid, signal);
  };
  process.once("exit", cluster.stopNow);
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  project.provide("postgres", { url: cluster.url, statusFile: cluster.statusFile });
  return async () => {
    process.off("exit", cluster.stopNow);
    process.off("SIGINT", stopOnSignal);
    process.off("SIGTERM", stopOnSignal);
    await cluster.stop();
  };
}
