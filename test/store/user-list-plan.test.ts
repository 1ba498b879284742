import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store, UserFilter } from "../../src/store/store.js";

// Store.listUsers / countUsers (ListUsers): a page costs what the page holds, not the organization's size (bench
// finding 3: every page read and sorted the whole organization). SQLite's plan of each statement the store runs
// reads the users through an index of the filter and never sorts: the page follows the index order.

let dir: string;
let store: Store;
let prepared: string[] = [];
const originalPrepare = Database.prototype.prepare;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-user-plan-"));
  Database.prototype.prepare = function recording(this: Database.Database, source: string) {
    prepared.push(source);
    return originalPrepare.call(this, source);
  } as typeof originalPrepare;
  store = createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "NORMAL", busyTimeoutMs: 1000 });
});

afterEach(async () => {
  Database.prototype.prepare = originalPrepare;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The query plans of the statements about the users table that `work` made the store compile. */
async function plansOf(work: () => Promise<unknown>): Promise<string[]> {
  prepared = [];
  await work();
  const statements = prepared.filter((source) => /from "users"/i.test(source));
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
}

describe("the users a ListUsers filter selects", () => {
  it.each<[string, UserFilter, RegExp]>([
    ["an organization's users", { instanceId: "i1", orgId: "o1" }, /SEARCH users USING (COVERING )?INDEX users_org \(org_id=\?/],
    ["one user name", { instanceId: "i1", orgId: "o1", userNameKey: "ada" }, /SEARCH users USING INDEX users_user_name_key \(instance_id=\? AND user_name_key=\?\)/],
    ["one email", { instanceId: "i1", orgId: "o1", emailKey: "ada@example.com" }, /SEARCH users USING (COVERING )?INDEX users_email \(instance_id=\? AND email_key=\?/],
  ])("%s: counted and paged through an index of the filter, never sorted", async (_name, filter, index) => {
    const plans = await plansOf(async () => {
      await store.countUsers(filter);
      await store.listUsers({ ...filter, limit: 100 });
      await store.listUsers({ ...filter, afterPosition: 10, limit: 100 });
    });
    for (const plan of plans) {
      expect(plan, plan).toMatch(index);
      expect(plan).not.toMatch(/TEMP B-TREE|SCAN users/);
    }
  });
});
