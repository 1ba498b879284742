import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * vitest globalSetup: one temporary directory for the whole run, made the test processes' TMPDIR (`os.tmpdir()` reads
 * it on every call, and the test files' processes and the servers they spawn inherit it), and removed when the run
 * ends — so the certificates, mail directories and data directories that tests make there never outlive the run,
 * also where a test keeps a file until its process exits (a CA file a server is still reading).
 */
export default function setup() {
  const previous = process.env["TMPDIR"];
  const root = mkdtempSync(join(tmpdir(), "gatehouse-tests-"));
  // /tmp's own mode (sticky, writable by all): a test runs gatehouse as `nobody`, whose tsx keeps its cache in TMPDIR.
  chmodSync(root, 0o1777);
  const remove = () => rmSync(root, { recursive: true, force: true });
  process.env["TMPDIR"] = root;
  process.once("exit", remove);
  return () => {
    process.off("exit", remove);
    if (previous === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = previous;
    remove();
  };
}
