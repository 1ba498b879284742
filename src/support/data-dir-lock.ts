import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Thrown when another live process holds the data dir. */
export class DataDirLockedError extends Error {
  // Stryker disable next-line StringLiteral: only in stack traces; callers tell it by its class (describe-failure.ts)
  override readonly name = "DataDirLockedError";
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`another gatehouse (pid ${pid}) is using the data dir ${dataDir}`);
  }
}

export interface DataDirLock {
  release(): void;
}

/** Locks this process holds (several servers may run in one process, e.g. in tests, on different dirs). */
const heldByThisProcess = new Set<string>();

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * One server per data dir: an exclusive lock file `gatehouse.lock` holding the owner's pid, created
 * with O_EXCL (as PostgreSQL's postmaster.pid). A lock left by a process that is gone (a crash, kill -9)
 * is taken over; a live owner makes this throw DataDirLockedError. SQLite's own locking would let two
 * servers interleave writes and both run the delivery worker, sending every mail twice.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, "gatehouse.lock");
  if (heldByThisProcess.has(path)) throw new DataDirLockedError(dataDir, process.pid);
  // Stryker disable next-line UpdateOperator,EqualityOperator: a second attempt fails only when another process re-creates the lock between the two (a race)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      heldByThisProcess.add(path);
      // Per handle: a second release of an old handle must not remove a lock taken again since.
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          heldByThisProcess.delete(path);
          // Only our own lock: never remove one another process took over.
          // Stryker disable next-line ObjectLiteral,BooleanLiteral: the file was just read; it is gone already only if someone removed it meanwhile (a race)
          if (readPid(path) === process.pid) rmSync(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readPid(path);
      // Stryker disable next-line ConditionalExpression: process.kill(undefined) throws a TypeError, so processIsAlive finds no owner either
      const named = owner !== undefined;
      if (named && owner !== process.pid && processIsAlive(owner)) throw new DataDirLockedError(dataDir, owner);
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: the lock was just found (EEXIST); it is gone already only if its owner released it meanwhile (a race)
      rmSync(path, { force: true });
    }
  }
  // Stryker disable next-line LogicalOperator: reached only when another process re-creates the lock between the two attempts (a race)
  throw new DataDirLockedError(dataDir, readPid(path) ?? 0);
}

function readPid(path: string): number | undefined {
  try {
    // parseInt skips the leading blanks and stops at the newline.
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    // Stryker disable BlockStatement: the catch below: an empty one returns undefined as well (a range: Stryker reads only a comment that leads a statement, and none leads a `catch`/`finally`)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
