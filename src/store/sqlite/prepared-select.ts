import type Database from "better-sqlite3";
import { Column, getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";

/** A SELECT of whole rows of one table by equal columns, compiled once: `get` the first row, `all` every row. */
export interface PreparedSelect<Row> {
  get(...values: unknown[]): Row | undefined;
  all(...values: unknown[]): Row[];
}

/**
 * `SELECT <every column> FROM table WHERE c1 = ? AND c2 = ? … [ORDER BY …]`, compiled once, its rows mapped as
 * drizzle's `db.select().from(table)` maps them (JSON parsed, booleans and timestamps decoded, NULL kept).
 *
 * For the reads an authenticated call makes every time (an organization, a project, its roles, a user's codes):
 * drizzle's prepared queries fill their placeholders and map every row generically (a type check and a reduce per
 * column) on each run, which cost more than SQLite's own lookup. Here the decoders are found once, and a column whose
 * decoder is the identity (text, plain integers) is copied as it comes.
 */
export function preparedSelect<T extends SQLiteTable>(
  client: Database.Database,
  table: T,
  where: SQLiteColumn[],
  orderBy: (SQLiteColumn | "rowid")[] = [],
): PreparedSelect<T["$inferSelect"]> {
  const columns = Object.entries(getTableColumns(table)) as [string, SQLiteColumn][];
  const quoted = (column: SQLiteColumn | "rowid") => (column === "rowid" ? "rowid" : `"${column.name}"`);
  const conditions = where.map((column) => `${quoted(column)} = ?`).join(" AND ");
  const order = orderBy.length > 0 ? ` ORDER BY ${orderBy.map(quoted).join(", ")}` : "";
  const statement = client.prepare(`SELECT ${columns.map(([, column]) => quoted(column)).join(", ")} FROM "${getTableName(table)}" WHERE ${conditions}${order}`).raw();
  const identity = Column.prototype.mapFromDriverValue;
  // Stryker disable next-line ConditionalExpression: calling an identity decoder answers the same value; skipping it only saves the call
  const decoders = columns.map(([key, column]) => ({ key, decode: column.mapFromDriverValue === identity ? undefined : column }));
  const toRow = (values: unknown[]) => {
    const row: Record<string, unknown> = {};
    for (let index = 0; index < decoders.length; index++) {
      const { key, decode } = decoders[index]!;
      const value = values[index];
      row[key] = value === null || decode === undefined ? value : decode.mapFromDriverValue(value);
    }
    return row as T["$inferSelect"];
  };
  return {
    get(...values) {
      const found = statement.get(...values) as unknown[] | undefined;
      return found === undefined ? undefined : toRow(found);
    },
    all(...values) {
      return (statement.all(...values) as unknown[][]).map(toRow);
    },
  };
}
