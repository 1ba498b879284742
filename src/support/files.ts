import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Writes a file only its owner can read, atomically (temporary file + rename). */
export function writePrivateFile(path: string, content: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

export function removeFileIfPresent(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Loads the 32-byte master key that encrypts secrets at rest, creating it (mode 0600) on first start.
 * A key of the wrong size is refused rather than silently replaced: replacing it would make every
 * stored secret unreadable.
 */
export function loadOrCreateMasterKey(path: string): Buffer {
  if (!existsSync(path)) writePrivateFile(path, `${randomBytes(32).toString("base64")}\n`);
  const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  if (key.length !== 32) throw new Error(`master key ${path} must hold 32 base64-encoded bytes`);
  return key;
}
