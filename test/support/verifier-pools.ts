import { afterEach } from "vitest";
import { createVerifierPool, type VerifierPool } from "../../src/support/password-verify/verifier-pool.js";

/** A `createVerifierPool` for a test file whose every pool is closed after its test. */
export function closedAfterEachTest(): (options: Parameters<typeof createVerifierPool>[0]) => VerifierPool {
  const pools: VerifierPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()));
  });
  return (options) => {
    const created = createVerifierPool(options);
    pools.push(created);
    return created;
  };
}
