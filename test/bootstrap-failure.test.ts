import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ensureBootstrapped } from "../src/bootstrap.js";
import { DomainError } from "../src/domain/errors.js";
import { StartupError } from "../src/startup/startup-error.js";
import { createSqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { systemClock } from "../src/support/clock.js";
import { createIdGenerator } from "../src/support/ids.js";
import { createLogger } from "../src/support/logger.js";
import { useTestServer } from "./support/server.js";

/**
 * A bootstrap that fails did not lose a race to another replica unless another instance exists and its own commit did
 * not happen (src/bootstrap.ts): otherwise the start fails with that failure. Against a running server's store made
 * to show an empty database and to refuse the commit, and against a fresh database whose token file cannot be put in
 * place after the commit.
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

describe("a bootstrap whose own commit went through but whose token file could not be put in place", () => {
  it("fails with that error, not as a race lost to another replica (whose instance it would then find)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-bootstrap-"));
    const store = createSqliteStore({ path: join(dir, "gatehouse.db"), synchronous: "NORMAL", busyTimeoutMs: 1000 });
    try {
      // A non-empty directory where the token file goes: the rename after the commit fails.
      const tokenPath = join(dir, "admin.pat");
      mkdirSync(tokenPath);
      writeFileSync(join(tokenPath, "occupied"), "");
      const deps = { store, clock: systemClock, ids: createIdGenerator(), masterKey: randomBytes(32), externalUrl: "https://iam.example.com" };
      const outcome = await ensureBootstrapped(deps, tokenPath, createLogger("silent")).then(
        () => "started",
        (error: unknown) => error,
      );
      // The operator is told what happened and what to run once the path is fixed; the system's error is the cause.
      expect(outcome).toBeInstanceOf(StartupError);
      expect((outcome as Error).message).toMatch(/^the instance was created, but its admin token could not be written to /);
      expect((outcome as Error).message).toContain(tokenPath);
      expect((outcome as Error).message).toContain("gatehouse recover-admin");
      expect((outcome as Error).message).toMatch(/\((EISDIR|ENOTEMPTY|EEXIST)\)/);
      expect((outcome as Error).cause).toMatchObject({ code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/) });
      expect(await store.getInstance()).toBeDefined();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
