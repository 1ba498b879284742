import { describe, expect, it } from "vitest";
import { runPageCheck } from "../../src/startup/page-check.js";
import { createLogger } from "../../src/support/logger.js";
import { eventually } from "../support/eventually.js";
import { LogCapture } from "../support/server.js";

// What the server does with the check of a database file a clean close vouched for, read beside it
// (src/startup/page-check.ts): intact, the run may vouch for the file again; damaged, a fatal line and a stop; no
// verdict, an error line and nothing else; cut short by the stop, nothing at all.
function outcomeOf(check: (signal: AbortSignal) => Promise<void>, abortFirst = false) {
  const logs = new LogCapture();
  const seen = { checked: 0, damaged: 0 };
  const stop = runPageCheck(check, { logger: createLogger("info", logs), database: "/data/gatehouse.db", onChecked: () => seen.checked++, onDamaged: () => seen.damaged++ });
  if (abortFirst) stop.abort();
  return { logs, seen };
}
const failing = (error: unknown) => () => Promise.reject(error);

describe("the page check beside the server", () => {
  it("intact: the run may vouch for the file, and says so", async () => {
    const { logs, seen } = outcomeOf(() => Promise.resolve());
    await eventually(() => seen.checked === 1, { what: "the verdict" });
    expect(seen.damaged).toBe(0);
    expect(logs.parsed().map((line) => [line.level, line.msg, line.database])).toEqual([[30, "database pages checked: intact", "/data/gatehouse.db"]]);
  });

  it("damaged (corrupt or no database): a fatal line naming the file and the backup, then the stop", async () => {
    for (const code of ["SQLITE_CORRUPT", "SQLITE_NOTADB"]) {
      const { logs, seen } = outcomeOf(failing(Object.assign(new Error("quick_check: page 7"), { code })));
      await eventually(() => seen.damaged === 1, { what: "the stop" });
      expect(seen.checked).toBe(0);
      expect(logs.parsed()).toEqual([expect.objectContaining({ level: 60, database: "/data/gatehouse.db", msg: expect.stringContaining("restore it from a backup") })]);
    }
  });

  it("no verdict (the thread did not start, the file stayed locked): an error line only — no stop, no vouching", async () => {
    const { logs, seen } = outcomeOf(failing(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" })));
    await eventually(() => logs.parsed().length === 1, { what: "the error line" });
    expect(logs.parsed()[0]).toMatchObject({ level: 50, database: "/data/gatehouse.db", msg: expect.stringContaining("next start checks them first") });
    expect(seen).toEqual({ checked: 0, damaged: 0 });
  });

  it("cut short by the stop: nothing, whatever the check then says", async () => {
    let reject: (error: unknown) => void = () => {};
    const { logs, seen } = outcomeOf((signal) => new Promise((_, rejectCheck) => { reject = rejectCheck; signal.addEventListener("abort", () => rejectCheck(signal.reason)); }), true);
    reject(Object.assign(new Error("quick_check: late"), { code: "SQLITE_CORRUPT" }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual({ checked: 0, damaged: 0 });
    expect(logs.parsed()).toEqual([]);
  });
});
