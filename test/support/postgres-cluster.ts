import { inject } from "vitest";
import type { ClusterAddress } from "./postgres.js";

/** The run's PostgreSQL cluster, inside a test file (test/support/postgres-global-setup.ts launched it). */
export const testCluster = (): ClusterAddress => inject("postgres");
