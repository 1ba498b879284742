import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

// Review of f00ed43 (countEvents bounded). Rule (store.ts Store.countEvents): "a count is work any reader of the log
// can ask for, so it is bounded". The bound is on MATCHING rows (LIMIT 100 000), not on the rows SQLite examines: a
// filter no index serves — aggregate_id without aggregate_type (ListEventsRequest allows it; src/queries/events.ts
// passes it through) — scans the whole log on the event loop, for the count and for the page alike, however few
// events match. bench/README finding 1 (1.5 s per call at 5 M events) is thus still open for ListEvents with
// aggregate_id only: measured ~0.1 s for count + page at 1 M small events here, so ~1 s at the bench's 5 M.

let dir: string;
let store: Store;
const EVENTS = 400_000;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-review-scan-"));
  const path = join(dir, "db.sqlite");
  store = createSqliteStore({ path, synchronous: "NORMAL", busyTimeoutMs: 1000 });
  const raw = new Database(path);
  const insert = raw.prepare(
    "INSERT INTO events (instance_id, aggregate_type, aggregate_id, aggregate_version, type, payload, actor, resource_owner, created_at) VALUES ('i1', 'user', ?, 1, 'user.changed', '{}', 'a', ?, 0)",
  );
  raw.transaction(() => {
    for (let i = 0; i < EVENTS; i++) insert.run(`u${i}`, `o${i % 50}`);
  })();
  raw.close();
}, 120_000);

afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fastest(work: () => Promise<unknown>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await work();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

describe("review f00ed43: a filtered count (and page) of events costs what the matches cost, not the log's size", () => {
  // BUG (src/store/sqlite/sqlite-events.ts:81 and :73, via src/queries/events.ts:27): no index starts with
  // aggregate_id, so `aggregate_id = ?` alone is SCAN events. Both ask for an id no event has: zero matches either way.
  it.fails("counting and listing by aggregate_id alone costs no more than by an indexed filter with as few matches", { timeout: 60_000 }, async () => {
    const indexed = await fastest(async () => {
      await store.countEvents({ resourceOwner: "nobody" });
      await store.listEvents({ resourceOwner: "nobody", limit: 100 });
    });
    const byIdOnly = await fastest(async () => {
      await store.countEvents({ aggregateId: "nobody" });
      await store.listEvents({ aggregateId: "nobody", limit: 100 });
    });
    expect(byIdOnly).toBeLessThan(5 + 10 * indexed);
  });
});
