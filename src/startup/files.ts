import { accessSync, constants, mkdirSync, readFileSync, statSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { StartupError } from "./startup-error.js";

// Stryker disable next-line StringLiteral: unreachable: every error node:fs throws has a code
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code ?? "error";

/** Reads a file named by a setting, or fails with one line naming the setting. */
export function readStartupFile(path: string, what: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new StartupError(`${what} ${path} cannot be read (${codeOf(error)}): fix ${flag} or the file's owner and mode`, { cause: error });
  }
}

/** The TLS certificate and key exist, are readable and belong together, before the port is bound. */
export function checkTlsFiles(tls: { certPath: string; keyPath: string }): void {
  const cert = readStartupFile(tls.certPath, "TLS certificate", "--tls-cert");
  const key = readStartupFile(tls.keyPath, "TLS key", "--tls-key");
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new StartupError(`TLS certificate ${tls.certPath} and key ${tls.keyPath} are not a valid PEM pair (${(error as Error).message}): fix --tls-cert / --tls-key`, { cause: error });
  }
}

/** Creates the data dir (0700) if needed and checks that this process can write in it. */
export function prepareDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new StartupError(`data dir ${dataDir} cannot be created (${codeOf(error)}): create it, owned by the user running gatehouse, or choose another --data-dir`, { cause: error });
  }
  try {
    // Stryker disable next-line ConditionalExpression,StringLiteral,ObjectLiteral: unreachable but for a race: mkdirSync({ recursive }) already throws EEXIST for a non-directory
    if (!statSync(dataDir).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new StartupError(`data dir ${dataDir} is not writable (${codeOf(error)}): give the user running gatehouse write access, or choose another --data-dir`, { cause: error });
  }
}
