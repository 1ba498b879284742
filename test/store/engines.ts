import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { createPostgresStore } from "../../src/store/postgres/pg-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { createTestDatabase } from "../support/postgres.js";
import { testCluster } from "../support/postgres-cluster.js";

/**
 * The storage engines the contract suite runs on, each giving a fresh, empty, migrated database per test: SQLite a
 * file in a new temporary directory, PostgreSQL a new database (`CREATE DATABASE`) on the run's cluster
 * (test/support/postgres.ts). `open()` opens one more store on that database: a reopen, or a second replica.
 */
export interface StoreEngine {
  name: "sqlite" | "postgres";
  /** A new database; `open` opens a store on it (as often as asked), `dispose` closes them all and removes it. */
  create(): Promise<{ open: () => Promise<Store>; dispose: () => Promise<void> }>;
}

const sqliteEngine: StoreEngine = {
  name: "sqlite",
  async create() {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-contract-"));
    return {
      open: async () => createSqliteStore({ path: join(dir, "db.sqlite"), synchronous: "FULL", busyTimeoutMs: 5000 }),
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

const postgresEngine: StoreEngine = {
  name: "postgres",
  async create() {
    const database = await createTestDatabase(testCluster());
    return { open: () => createPostgresStore({ url: database.url, poolSize: 4 }), dispose: database.drop };
  },
};

/** Every engine, for `describe.each(storeEngines())("… on $name", …)`. */
export function storeEngines(): StoreEngine[] {
  return [sqliteEngine, postgresEngine];
}

/**
 * A fresh store per test on `engine`: `store()` is the test's store; `another()` opens one more on the same database
 * (a second replica; closed after the test, as is every store opened here).
 */
export function useStore(engine: StoreEngine) {
  let database: Awaited<ReturnType<StoreEngine["create"]>> | undefined;
  let opened: Store[] = [];
  let current: Store | undefined;
  const open = async () => {
    const store = await database!.open();
    opened.push(store);
    return store;
  };
  beforeEach(async () => {
    database = await engine.create();
    current = await open();
  });
  afterEach(async () => {
    const stores = opened;
    opened = [];
    current = undefined;
    await Promise.all(stores.map((store) => store.close()));
    await database?.dispose();
    database = undefined;
  });
  return {
    store: (): Store => current!,
    another: open,
    /** Closes the test's store and opens the database again (data must survive). */
    reopen: async (): Promise<Store> => {
      await current!.close();
      current = await open();
      return current;
    },
  };
}
