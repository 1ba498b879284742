/**
 * The query plans of what a `--scale --trace-sql` run measured:
 *
 *   node --import tsx bench/explain.ts bench/results/<run>-scale.json [path/to/gatehouse.db]
 *
 * For every statement the scaled database's runs made, by scenario: calls per request, mean time on the empty and on
 * the scaled database (from the trace), and SQLite's `EXPLAIN QUERY PLAN` on the database (read-only; by default
 * the cached seed of the run's N, see bench/lib/scale-seed.ts). Plans that read a whole table or index (`SCAN`
 * without a bound) or sort in a temporary B-tree are marked `<<`: the costs that grow with the data.
 */
import Database from "better-sqlite3";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Row } from "./lib/report.js";
import { scaleCacheDir } from "./lib/scale-seed.js";

const [resultsFile, databaseArg] = process.argv.slice(2);
if (!resultsFile) {
  process.stderr.write("usage: node --import tsx bench/explain.ts <results.json of a --scale --trace-sql run> [gatehouse.db]\n");
  process.exit(2);
}
const result = JSON.parse(readFileSync(resultsFile, "utf8")) as { rows: Row[]; scale?: { users: number } };
const database = databaseArg ?? (result.scale ? join(scaleCacheDir(result.scale.users).dir, "data", "gatehouse.db") : "");
if (!database || !existsSync(database)) {
  process.stderr.write(`no database at "${database}": give its path\n`);
  process.exit(2);
}
const db = new Database(database, { readonly: true, fileMustExist: true });
const compact = (sql: string) => sql.replace(/\s+/g, " ").replace(/^select (.{40,}?) from /i, "select … from ");

function plan(sql: string): string[] {
  try {
    // Unbound values: the plan does not depend on them (there are no statistics to weigh them with).
    const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
    const parameters = (sql.match(/\?/g) ?? []).map(() => null);
    const steps = statement.all(...parameters) as { id: number; parent: number; detail: string }[];
    const depth = new Map<number, number>([[0, 0]]);
    return steps.map((step) => {
      const level = (depth.get(step.parent) ?? 0) + 1;
      depth.set(step.id, level);
      // What reads more rows as the table grows: a scan, or a range with no equality and no LIMIT to stop it
      // (a count over `sequence >= ?`); a sort in a temporary B-tree costs as many rows as the search found.
      // (A scan of a statement without WHERE that takes a LIMIT stops there: `SELECT 1 FROM sqlite_master LIMIT 1`.)
      const scan = /^SCAN /.test(step.detail) && !/USING (INTEGER PRIMARY KEY|(COVERING )?INDEX \S+) \(/.test(step.detail) && !(/\blimit\b/i.test(sql) && !/\bwhere\b/i.test(sql));
      const openRange = /^SEARCH /.test(step.detail) && /[<>]/.test(step.detail) && !/=\?/.test(step.detail.replace(/[<>]=\?/g, "")) && !/\blimit\b/i.test(sql);
      const mark = scan ? "   << reads the whole table" : openRange ? "   << reads every row of the range" : /TEMP B-TREE/.test(step.detail) ? "   << sorts what it found" : "";
      return `${"  ".repeat(level)}${step.detail}${mark}`;
    });
  } catch (error) {
    return [`  (no plan: ${(error as Error).message})`];
  }
}

const lines: string[] = [`Query plans on ${database}`];
for (const row of result.rows.filter((r) => r.database === "scaled" && r.sql)) {
  const empty = result.rows.find((r) => r.database === "empty" && r.scenario === row.scenario && r.protocol === row.protocol && r.pacedRate === undefined);
  const emptyMean = new Map((empty?.sql?.entries ?? []).map((e) => [e.sql, (e.totalMs * 1000) / e.calls]));
  const requests = Math.max(1, row.measurement.requests);
  lines.push("", `== ${row.title}, ${row.protocol}: ${row.measurement.rps.toFixed(0)} req/s scaled${empty ? `, ${empty.measurement.rps.toFixed(0)} empty` : ""}`);
  for (const entry of row.sql!.entries) {
    if (/^(PRAGMA|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(entry.sql.trim())) continue;
    const scaledMean = (entry.totalMs * 1000) / entry.calls;
    const before = emptyMean.get(entry.sql);
    lines.push(
      `${(entry.calls / requests).toFixed(2)}/req, ${before === undefined ? "-" : before.toFixed(1)} µs empty, ${scaledMean.toFixed(1)} µs scaled: ${compact(entry.sql)}`,
      ...plan(entry.sql),
    );
  }
}
db.close();
process.stdout.write(`${lines.join("\n")}\n`);
