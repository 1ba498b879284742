import type { TestProject } from "vitest/node";
import { startPostgresCluster } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The test PostgreSQL cluster's superuser URL (test/support/postgres.ts); tests create their own databases on it. */
    postgresUrl: string;
  }
}

/**
 * vitest globalSetup: one PostgreSQL cluster for the whole run, its URL provided to every test file
 * (`inject("postgresUrl")`); stopped and removed when the run ends, whether the tests passed or not — also when the
 * run is interrupted.
 */
export default async function setup(project: TestProject) {
  const cluster = await startPostgresCluster();
  const stopOnSignal = (signal: NodeJS.Signals) => {
    cluster.stop();
    process.kill(process.pid, signal);
  };
  process.once("exit", cluster.stop);
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);
  project.provide("postgresUrl", cluster.url);
  return () => {
    process.off("exit", cluster.stop);
    process.off("SIGINT", stopOnSignal);
    process.off("SIGTERM", stopOnSignal);
    cluster.stop();
  };
}
