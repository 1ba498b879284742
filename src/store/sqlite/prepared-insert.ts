import type Database from "better-sqlite3";
import { type Column, getTableColumns, getTableName, is, SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";

/**
 * An INSERT of one row of `table`, compiled once (a bulk import writes users by the thousand): drizzle
 * builds and compiles the SQL of `db.insert(table).values(row)` on every call, which costs many times what SQLite
 * then spends on the row. Values are mapped as drizzle maps them (booleans to 0/1, JSON to text); a property left out
 * takes the column's default, or null — what drizzle's insert does.
 */
export function preparedInsert<T extends SQLiteTable>(client: Database.Database, table: T): (row: T["$inferInsert"]) => void {
  const columns = Object.entries(getTableColumns(table)) as [string, Column][];
  for (const [key, column] of columns) {
    // What drizzle computes per row or leaves to SQLite cannot be filled in here, and the prepared updates of
    // sqlite-writes.ts would freeze an $onUpdate value when they are built: no table of the schema has any of these
    // (test/store/prepared-insert.test.ts compiles every table's insert). A generated column SQLite itself refuses
    // when the insert is compiled.
    if (is(column.default, SQL)) throw new Error(`column ${key} has an SQL default`);
    if (column.defaultFn || column.onUpdateFn) throw new Error(`column ${key} has a $defaultFn or $onUpdateFn`);
  }
  const names = columns.map(([, column]) => `"${column.name}"`).join(", ");
  const statement = client.prepare(`INSERT INTO "${getTableName(table)}" (${names}) VALUES (${columns.map(() => "?").join(", ")})`);
  return (row) => {
    const values = row as Record<string, unknown>;
    statement.run(
      columns.map(([key, column]) => {
        // As drizzle: a property left out (undefined) takes the column's default; an explicit null stays null.
        const value = values[key] === undefined ? (column.default ?? null) : values[key];
        return value === null ? null : column.mapToDriverValue(value);
      }),
    );
  };
}

/**
 * `insertRow(table, row)`: the insert of every table compiled once, on its first row (a commit's inserts, all tables).
 */
export function preparedInserts(client: Database.Database) {
  const compiled = new Map<SQLiteTable, (row: never) => void>();
  const compile = <T extends SQLiteTable>(table: T) => {
    const insert = preparedInsert(client, table);
    compiled.set(table, insert);
    return insert;
  };
  return <T extends SQLiteTable>(table: T, row: T["$inferInsert"]): void =>
    ((compiled.get(table) as ((row: T["$inferInsert"]) => void) | undefined) ?? compile(table))(row);
}
