import { readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeStartupFailure } from "../../src/startup/describe-failure.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { lockDataDir } from "../../src/support/data-dir-lock.js";
import { useTempRoot } from "./data-dir.js";

// What an operator reads for a failed start or subcommand: one line, what is wrong and what to do.
const root = useTempRoot("describe-failure");

/** The error a real listen fails with (port, address and syscall set by Node). */
function listenError(port: number, host: string): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", resolve);
    server.listen(port, host, () => server.close(() => reject(new Error(`listening on ${host}:${port} succeeded`))));
  });
}

const systemError = (code: string, fields: Record<string, unknown>) => Object.assign(new Error(`${code}: system error`), { code, ...fields });

describe("describeStartupFailure", () => {
  it("an anticipated failure (StartupError) is its own message, without its cause", () => {
    const cause = new Error("SQLITE_NOTADB: file is not a database, secret=hunter2");
    const line = describeStartupFailure(new StartupError("database /d/gatehouse.db is not a database", { cause }));
    expect(line).toBe("database /d/gatehouse.db is not a database");
  });

  it("a data dir locked by another server: who holds it, and to stop it or choose another --data-dir", () => {
    const lock = lockDataDir(root());
    try {
      let error: unknown;
      try {
        lockDataDir(root());
      } catch (thrown) {
        error = thrown;
      }
      expect(describeStartupFailure(error)).toBe(`another gatehouse (pid ${process.pid}) is using the data dir ${root()}: stop it first, or give this server its own --data-dir`);
    } finally {
      lock.release();
    }
  });

  it("a port in use (a real listen): names port and address, and what to do", async () => {
    const occupier = net.createServer();
    await new Promise<void>((resolve) => occupier.listen(0, "127.0.0.1", resolve));
    const { port } = occupier.address() as net.AddressInfo;
    try {
      expect(describeStartupFailure(await listenError(port, "127.0.0.1"))).toBe(`port ${port} on 127.0.0.1 is in use: stop what listens there or choose another --port`);
    } finally {
      await new Promise((resolve) => occupier.close(resolve));
    }
  });

  it("an address that is not this machine's (a real listen on TEST-NET-1): choose another --host", async () => {
    expect(describeStartupFailure(await listenError(0, "192.0.2.1"))).toBe("address 192.0.2.1 is not an address of this machine: choose another --host");
  });

  it("a file that does not exist (a real read): names the file", () => {
    const missing = join(root(), "no-such-file.pem");
    let error: unknown;
    try {
      readFileSync(missing);
    } catch (thrown) {
      error = thrown;
    }
    expect(describeStartupFailure(error)).toBe(`${missing} does not exist`);
  });

  // Errors a root test process cannot provoke (privileged ports, file modes, read-only mounts) in the
  // shape Node gives them to an unprivileged server.
  it.each([
    ["EACCES on listen", systemError("EACCES", { syscall: "listen", port: 443, address: "0.0.0.0" }), "not allowed to listen on port 443: use a port above 1023 or grant the capability"],
    ["EACCES on a file", systemError("EACCES", { syscall: "open", path: "/srv/gatehouse/master.key" }), "permission denied on /srv/gatehouse/master.key: check its owner and mode"],
    ["EROFS", systemError("EROFS", { syscall: "open", path: "/mnt/ro/gatehouse.db" }), "/mnt/ro/gatehouse.db is on a read-only file system: choose a writable --data-dir"],
  ])("%s: %s", (_case, error, line) => {
    expect(describeStartupFailure(error)).toBe(line);
  });

  it("a system error without its usual fields still reads as a sentence (never 'undefined')", () => {
    expect(describeStartupFailure(systemError("EADDRINUSE", {}))).toBe("port  on  is in use: stop what listens there or choose another --port");
    expect(describeStartupFailure(systemError("EADDRNOTAVAIL", {}))).toBe("address  is not an address of this machine: choose another --host");
    expect(describeStartupFailure(systemError("EACCES", { syscall: "listen" }))).toBe("not allowed to listen on port : use a port above 1023 or grant the capability");
    expect(describeStartupFailure(systemError("EACCES", {}))).toBe("permission denied on a file: check its owner and mode");
    expect(describeStartupFailure(systemError("ENOENT", {}))).toBe("a file does not exist");
    expect(describeStartupFailure(systemError("EROFS", {}))).toBe("a file is on a read-only file system: choose a writable --data-dir");
  });

  it("anything else is unexpected: its message only (no stack, no cause), and where to look", () => {
    const error = new Error("boom", { cause: new Error("token gh1.abc.secret") });
    const line = describeStartupFailure(error);
    expect(line).toBe("unexpected failure: boom (start with --log-level debug for details)");
    expect(describeStartupFailure(systemError("ENOSPC", {}))).toBe("unexpected failure: ENOSPC: system error (start with --log-level debug for details)");
    expect(describeStartupFailure("a thrown string")).toBe("unexpected failure: a thrown string (start with --log-level debug for details)");
    // Anything may be thrown, also nothing: still one line, not a TypeError out of the describer.
    expect(describeStartupFailure(null)).toMatch(/^unexpected failure: .* \(start with --log-level debug for details\)$/);
    expect(describeStartupFailure(undefined)).toMatch(/^unexpected failure: .* \(start with --log-level debug for details\)$/);
  });
});
