import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirLockedError, type DataDirLock, lockDataDir } from "../../src/support/data-dir-lock.js";
import { modeOf, useTempRoot } from "./data-dir.js";

// One server per data dir: `gatehouse.lock` holds the owner's pid. A live owner refuses the next one; a
// lock whose owner is gone (crash, kill -9) is taken over; a release removes only the releaser's own lock.
const root = useTempRoot("lock");
let dirs = 0;
const newDataDir = () => {
  const dataDir = join(root(), `d${++dirs}`);
  mkdirSync(dataDir);
  return { dataDir, lockFile: join(dataDir, "gatehouse.lock") };
};

// Locks and children a test made, undone after it whatever happened (the lock registry is per process).
const held: DataDirLock[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const lock of held.splice(0)) lock.release();
  for (const child of children.splice(0)) child.kill("SIGKILL");
});
const lock = (dataDir: string) => {
  const taken = lockDataDir(dataDir);
  held.push(taken);
  return taken;
};

function lockedError(dataDir: string): DataDirLockedError {
  try {
    lock(dataDir);
  } catch (error) {
    expect(error).toBeInstanceOf(DataDirLockedError);
    return error as DataDirLockedError;
  }
  throw new Error("expected DataDirLockedError, the lock was granted");
}

/** A process that is alive until the test ends. */
function liveProcess(): number {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(child);
  return child.pid as number;
}

/** The pid of a process that has exited (and was reaped). */
async function deadPid(): Promise<number> {
  const child = spawn("true", [], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid as number;
}

describe("lockDataDir", () => {
  it("writes this process's pid to gatehouse.lock (0600); release removes it and the dir can be locked again", () => {
    const { dataDir, lockFile } = newDataDir();
    const taken = lock(dataDir);
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`);
    expect(modeOf(statSync(lockFile))).toBe(0o600);
    taken.release();
    expect(existsSync(lockFile)).toBe(false);
    lock(dataDir);
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`);
  });

  it("a second lock in the same process (two servers on one dir) is refused, naming this pid and the dir", () => {
    const { dataDir, lockFile } = newDataDir();
    lock(dataDir);
    const error = lockedError(dataDir);
    expect([error.pid, error.dataDir, error.message]).toEqual([process.pid, dataDir, `another gatehouse (pid ${process.pid}) is using the data dir ${dataDir}`]);
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`);
  });

  it("a lock held by another live process is refused, naming that pid, and left in place", () => {
    const { dataDir, lockFile } = newDataDir();
    const owner = liveProcess();
    writeFileSync(lockFile, `${owner}\n`);
    const error = lockedError(dataDir);
    expect(error.pid).toBe(owner);
    expect(error.message).toBe(`another gatehouse (pid ${owner}) is using the data dir ${dataDir}`);
    expect(readFileSync(lockFile, "utf8")).toBe(`${owner}\n`);
  });

  it("a lock left by a process that is gone (crash, kill -9) is taken over", async () => {
    const { dataDir, lockFile } = newDataDir();
    writeFileSync(lockFile, `${await deadPid()}\n`);
    lock(dataDir);
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`);
  });

  it("a lock naming this very pid but not held here (a restarted container reuses pids) is taken over", () => {
    const { dataDir, lockFile } = newDataDir();
    writeFileSync(lockFile, `${process.pid}\n`);
    lock(dataDir);
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`);
  });

  // 0 and -1 would make the liveness probe signal a process group or every process: never a pid.
  it.each(["", "not a pid\n", "0\n", "-1\n", "99999999999999999999\n"])("a lock file without a usable pid (%j) is taken over", (content) => {
    const { dataDir, lockFile } = newDataDir();
    writeFileSync(lockFile, content);
    lock(dataDir);
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`);
  });

  it("separate data dirs are locked independently in one process", () => {
    const first = newDataDir();
    const second = newDataDir();
    lock(first.dataDir);
    lock(second.dataDir);
    expect([readFileSync(first.lockFile, "utf8"), readFileSync(second.lockFile, "utf8")]).toEqual([`${process.pid}\n`, `${process.pid}\n`]);
  });

  it("a data dir that does not exist: the system's error, not a lock refusal", () => {
    const dataDir = join(root(), "never-created");
    expect(() => lock(dataDir)).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(() => lock(dataDir)).not.toThrow(DataDirLockedError);
  });
});

describe("release", () => {
  it("never removes a lock another process took over meanwhile", () => {
    const { dataDir, lockFile } = newDataDir();
    const taken = lock(dataDir);
    const other = liveProcess();
    writeFileSync(lockFile, `${other}\n`);
    taken.release();
    expect(readFileSync(lockFile, "utf8")).toBe(`${other}\n`);
  });

  it("a second release of an old handle leaves the lock taken again since in place", () => {
    const { dataDir, lockFile } = newDataDir();
    const first = lock(dataDir);
    first.release();
    lock(dataDir);
    first.release();
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid}\n`);
    expect(() => lock(dataDir)).toThrow(DataDirLockedError);
  });
});
