import { getTableColumns } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";

/**
 * A table's columns without `position` (the engine's insertion order, schema/position.ts): what a read selects, so
 * it returns exactly the row of rows.ts.
 */
export function rowColumns<T extends PgTable>(table: T): Omit<T["_"]["columns"], "position"> {
  const { position: _position, ...columns } = getTableColumns(table) as T["_"]["columns"] & { position?: unknown };
  return columns;
}
