import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensureBootstrapped } from "../src/bootstrap.js";
import { DomainError } from "../src/domain/errors.js";
import { useTestServer } from "./support/server.js";

/**
 * A bootstrap that fails while no instance exists did not lose a race to another replica (src/bootstrap.ts): the
 * start fails with that failure, and no admin token is left behind. Here against a running server's store, made to
 * show an empty database and to refuse the bootstrap's commit.
 */
const t = useTestServer();

describe("a bootstrap that fails with no instance in the database", () => {
  it("fails with its own error and leaves no token file", async () => {
    const real = t.server.gatehouse.deps;
    const refused = new DomainError("unavailable", "store.sync_failed", "the database could not be made durable");
    const store = new Proxy(real.store, {
      get(target, property, receiver) {
        if (property === "getInstance") return async () => undefined;
        if (property === "commit") return () => Promise.reject(refused);
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-bootstrap-"));
    try {
      const outcome = await ensureBootstrapped({ ...real, store }, join(dir, "admin.pat"), t.server.gatehouse.logger).then(
        () => "started",
        (error: unknown) => error,
      );
      expect(outcome).toBe(refused);
      expect(existsSync(join(dir, "admin.pat"))).toBe(false);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
