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
  // An interrupted run ends by its signal, which runs no `exit` listener: removed there too, then the signal goes on.
  const removeOnSignal = (signal: NodeJS.Signals) => {
    remove();
    process.kill(process.pid, signal);
  };
  process.once("exit", remove);
  process.once("SIGINT", removeOnSignal);
  process.once("SIGTERM", removeOnSignal);
  return () => {
    process.off("exit", remove);
    process.off("SIGINT", removeOnSignal);
    process.off("SIGTERM", removeOnSignal);
    if (previous === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = previous;
    remove();
  };
}
