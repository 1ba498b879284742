import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

/**
 * A SQLite store on a fresh file for each test, whose compiled statements are recorded, so a test can ask for SQLite's
 * query plan of every statement some store work ran against one table (the plan tests of the list and count reads).
 */
export function useRecordedPlans(): { store(): Store; plansOf(table: string, work: () => Promise<unknown>): Promise<string[]> } {
  let dir: string;
  let store: Store | undefined;
  let prepared: string[] = [];
  const originalPrepare = Database.prototype.prepare;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-plan-"));
    Database.prototype.prepare = function recording(this: Database.Database, source: string) {
      prepared.push(source);
      return originalPrepare.call(this, source);
    } as typeof originalPrepare;
    store = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "NORMAL", busyTimeoutMs: 1000 });
  });

  afterEach(async () => {
    Database.prototype.prepare = originalPrepare;
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  return {
    store: () => store!,
    /** The query plans (steps joined by " | ") of the statements about `table` that `work` made the store compile. */
    async plansOf(table, work) {
      prepared = [];
      await work();
      const statements = prepared.filter((source) => new RegExp(`from "${table}"`, "i").test(source));
      expect(statements.length).toBeGreaterThan(0);
      const raw = new Database(join(dir, "db.sqlite"), { readonly: true });
      try {
        return statements.map((source) => {
          const parameters = (source.match(/\?/g) ?? []).map(() => null);
          const plan = originalPrepare.call(raw, `EXPLAIN QUERY PLAN ${source}`).all(parameters) as { detail: string }[];
          return plan.map((step) => step.detail).join(" | ");
        });
      } finally {
        raw.close();
      }
    },
  };
}
