import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname } from "node:path";

/** Writes a file only its owner can read, atomically (temporary file + rename). */
export function writePrivateFile(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  // Stryker disable next-line ObjectLiteral: the chmod below gives 0600 too; the mode only closes the moment between create and chmod, which no test can see
  writeFileSync(temporary, content, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

export function removeFileIfPresent(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Writes `content` to `path` (mode 0600) around `action`: to `<path>.<pid>.<random>.pending` BEFORE it, renamed into
 * place after it succeeds, removed when it fails. Used for tokens shown only once: whatever the action
 * commits always has its file on disk, and a failed action leaves no stray credential.
 */
export async function withPrivateFileAround<T>(path: string, content: string, action: () => Promise<T>): Promise<T> {
  // Named for this process and call: replicas sharing a data dir (PostgreSQL) never write or rename each other's.
  const pending = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.pending`;
  writePrivateFile(pending, content);
  try {
    const result = await action();
    renameSync(pending, path);
    return result;
  } catch (error) {
    removeFileIfPresent(pending);
    throw error;
  }
}
