import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeFileIfPresent } from "../../src/support/files.js";

// removeFileIfPresent (src/support/files.ts): removes the file when it is there, and does nothing when it is not.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gatehouse-files-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("removing a file if present", () => {
  it("removes a file that is there", () => {
    const path = join(dir, "token.pending");
    writeFileSync(path, "x");
    removeFileIfPresent(path);
    expect(existsSync(path)).toBe(false);
  });

  it("does nothing, and throws nothing, when the file is not there", () => {
    const path = join(dir, "never-written");
    expect(() => removeFileIfPresent(path)).not.toThrow();
    expect(existsSync(path)).toBe(false);
  });
});
