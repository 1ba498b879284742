import type Database from "better-sqlite3";

/** How many compiled statements are kept: far more than the distinct statements Gatehouse makes in steady state. */
export const STATEMENT_CACHE_SIZE = 500;

/**
 * The connection as drizzle sees it, with compiled statements kept by SQL text. drizzle compiles a statement
 * (`prepare`) for every query it did not prepare ahead — every row write of a commit and every ad-hoc read — and
 * compiling costs more than running a short statement. The same SQL text gets the compiled statement back, least
 * recently used ones dropped beyond `size`. A statement keeps the result mode its last user set (`raw`), so a reused
 * reader is reset to plain rows first; drizzle sets the mode it wants itself on every run that needs one.
 */
export function withStatementCache(sqlite: Database.Database, size = STATEMENT_CACHE_SIZE): Database.Database {
  const compiled = new Map<string, Database.Statement>();
  const prepare = (source: string): Database.Statement => {
    const kept = compiled.get(source);
    if (kept) {
      // Most recently used last: Map keeps insertion order.
      compiled.delete(source);
      compiled.set(source, kept);
      if (kept.reader) kept.raw(false);
      return kept;
    }
    const statement = sqlite.prepare(source);
    compiled.set(source, statement);
    if (compiled.size > size) compiled.delete(compiled.keys().next().value as string);
    return statement;
  };
  return new Proxy(sqlite, {
    get(target, property) {
      if (property === "prepare") return prepare;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
