import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DataDirLockedError, lockDataDir } from "../../src/support/data-dir-lock.js";

// One server per data dir (src/support/data-dir-lock.ts): the owner named in gatehouse.lock counts as alive when the
// system says it exists, also when it belongs to another user (kill(pid, 0) answers EPERM) — such a lock is
// refused, never taken over. Only an owner that does not exist (ESRCH) leaves a lock that is taken over.
// The tests run as any user, so the system's answer for the owner is given to process.kill.

let dataDir: string;
const owner = 4_194_000;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "gatehouse-lock-"));
  writeFileSync(join(dataDir, "gatehouse.lock"), `${owner}\n`);
});

afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dataDir, { recursive: true, force: true });
});

/** process.kill(owner, 0) answers with this error code; other pids are signalled as usual. */
function ownerAnswers(code: string) {
  const kill = process.kill.bind(process);
  vi.spyOn(process, "kill").mockImplementation((pid: number, signal?: string | number) => {
    if (pid === owner) throw Object.assign(new Error(`kill ${code}`), { code });
    return kill(pid, signal);
  });
}

describe("the owner of a lock", () => {
  it("a live owner of another user (EPERM) keeps the lock: this start is refused, naming it", () => {
    ownerAnswers("EPERM");
    let error: unknown;
    try {
      lockDataDir(dataDir).release();
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect(error).toMatchObject({ pid: owner, dataDir });
    expect(readFileSync(join(dataDir, "gatehouse.lock"), "utf8")).toBe(`${owner}\n`);
  });

  it("an owner that does not exist (ESRCH) left a stale lock: it is taken over", () => {
    ownerAnswers("ESRCH");
    const lock = lockDataDir(dataDir);
    expect(readFileSync(join(dataDir, "gatehouse.lock"), "utf8")).toBe(`${process.pid}\n`);
    lock.release();
  });
});
