import { DataDirLockedError } from "../support/data-dir-lock.js";
import { StartupError } from "./startup-error.js";

/**
 * The one line an operator sees for a failed start or subcommand: what is wrong and what to do.
 * Errors Gatehouse anticipates say so themselves (StartupError); system errors are named by their
 * code and path; anything else is unexpected and says where to look.
 */
export function describeStartupFailure(error: unknown): string {
  if (error instanceof StartupError) return error.message;
  if (error instanceof DataDirLockedError) return `${error.message}: stop it first, or give this server its own --data-dir`;
  // Anything can be thrown, also null: that must still print one line, not a TypeError.
  const system = (error ?? {}) as NodeJS.ErrnoException & { address?: string; port?: number };
  switch (system.code) {
    case "EADDRINUSE":
      return `port ${system.port ?? ""} on ${system.address ?? ""} is in use: stop what listens there or choose another --port`;
    case "EADDRNOTAVAIL":
      return `address ${system.address ?? ""} is not an address of this machine: choose another --host`;
    case "EACCES":
      if (system.syscall === "listen") return `not allowed to listen on port ${system.port ?? ""}: use a port above 1023 or grant the capability`;
      return `permission denied on ${system.path ?? "a file"}: check its owner and mode`;
    case "ENOENT":
      return `${system.path ?? "a file"} does not exist`;
    case "EROFS":
      return `${system.path ?? "a file"} is on a read-only file system: choose a writable --data-dir`;
    default:
      return `unexpected failure: ${(error as Error)?.message ?? String(error)} (start with --log-level debug for details)`;
  }
}
