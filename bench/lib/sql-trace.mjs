/**
 * `--trace-sql`: loaded into the Gatehouse process (`node --import`), it counts every SQLite statement that runs
 * (better-sqlite3's run/get/all/iterate, by SQL text) and the time it takes. On SIGUSR2 it writes what it counted
 * since the last signal to the file named by GATEHOUSE_BENCH_SQL_TRACE (written beside and renamed, so a reader
 * never sees half of it) and starts counting anew: the bench signals after each run and reads the statements that
 * run made. Only the bench loads it; Gatehouse knows nothing of it.
 */
import { renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const file = process.env.GATEHOUSE_BENCH_SQL_TRACE;
if (file) {
  const Database = createRequire(import.meta.url)("better-sqlite3");
  const probe = new Database(":memory:");
  const Statement = Object.getPrototypeOf(probe.prepare("SELECT 1"));
  probe.close();
  /** SQL text → [calls, total ns]. */
  let stats = new Map();
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = Statement[method];
    Statement[method] = function traced(...args) {
      const started = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        // iterate() is timed until its iterator is made, not read: Gatehouse does not use it.
        const entry = stats.get(this.source);
        const ns = Number(process.hrtime.bigint() - started);
        if (entry) {
          entry[0] += 1;
          entry[1] += ns;
        } else stats.set(this.source, [1, ns]);
      }
    };
  }
  process.on("SIGUSR2", () => {
    const snapshot = [...stats].map(([sql, [calls, ns]]) => ({ sql, calls, totalMs: ns / 1e6 }));
    stats = new Map();
    writeFileSync(`${file}.part`, JSON.stringify(snapshot));
    renameSync(`${file}.part`, file);
  });
}
