import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The error of a database a newer Gatehouse has migrated (`code` for the start-up message). */
export class NewerSchemaError extends Error {
  readonly code = "GATEHOUSE_SCHEMA_NEWER";
}

/**
 * Refuses a database that a newer Gatehouse migrated, given the time of the newest migration it records (null when
 * none): drizzle applies only migrations newer than the newest one recorded, so it would skip them all and this
 * version would run on a schema it does not know.
 */
export function refuseNewerSchema(newest: number | string | null, migrationsFolder: string): void {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta/_journal.json"), "utf8")) as { entries: { when: number }[] };
  const known = Math.max(...journal.entries.map((entry) => entry.when));
  // An empty migrations table gives null: Number(null) is 0, never newer than a known migration.
  if (Number(newest) > known) {
    throw new NewerSchemaError(`the newest migration applied (${String(newest)}) is newer than this version's newest (${known})`);
  }
}
