import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTlsFiles, prepareDataDir, readStartupFile } from "../../src/startup/files.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { writePrivateFile } from "../../src/support/files.js";
import { makeSelfSignedCertificate } from "../support/tls.js";
import { modeOf, useTempRoot } from "./data-dir.js";
import { thrownBy } from "../support/thrown.js";

// Files named by settings are checked before the port is bound and before anything is written; each
// failure is one line naming the file and the flag that set it.
const root = useTempRoot("startup-files");

const startupError = (work: () => unknown): StartupError => thrownBy(StartupError, work);

describe("readStartupFile", () => {
  it("returns the file's bytes; a missing or unreadable file names the setting's flag and the system's code", () => {
    const file = join(root(), "ca.pem");
    writeFileSync(file, "-----BEGIN CERTIFICATE-----\n");
    expect(readStartupFile(file, "SMTP CA file", "--smtp-ca-file").toString("utf8")).toBe("-----BEGIN CERTIFICATE-----\n");
    const missing = join(root(), "missing.pem");
    expect(startupError(() => readStartupFile(missing, "SMTP CA file", "--smtp-ca-file")).message).toBe(
      `SMTP CA file ${missing} cannot be read (ENOENT): fix --smtp-ca-file or the file's owner and mode`,
    );
    expect(startupError(() => readStartupFile(root(), "TLS key", "--tls-key")).message).toBe(`TLS key ${root()} cannot be read (EISDIR): fix --tls-key or the file's owner and mode`);
  });
});

describe("checkTlsFiles", () => {
  it("accepts a certificate with its own key", () => {
    expect(() => checkTlsFiles(makeSelfSignedCertificate())).not.toThrow();
  });

  it("a missing certificate or key: names that file and its flag", () => {
    const { certPath, keyPath } = makeSelfSignedCertificate();
    const missing = join(root(), "nothing.pem");
    expect(startupError(() => checkTlsFiles({ certPath: missing, keyPath })).message).toBe(
      `TLS certificate ${missing} cannot be read (ENOENT): fix --tls-cert or the file's owner and mode`,
    );
    expect(startupError(() => checkTlsFiles({ certPath, keyPath: missing })).message).toBe(`TLS key ${missing} cannot be read (ENOENT): fix --tls-key or the file's owner and mode`);
  });

  it("a certificate and a key that do not belong together: names both, OpenSSL's reason, and both flags; never the key's content", () => {
    const first = makeSelfSignedCertificate();
    const second = makeSelfSignedCertificate();
    const error = startupError(() => checkTlsFiles({ certPath: first.certPath, keyPath: second.keyPath }));
    expect(error.message).toBe(
      `TLS certificate ${first.certPath} and key ${second.keyPath} are not a valid PEM pair (error:05800074:x509 certificate routines::key values mismatch): fix --tls-cert / --tls-key`,
    );
    const keyBody = readFileSync(second.keyPath, "utf8").split("\n")[1] as string;
    expect(error.message).not.toContain(keyBody);
  });

  it("files that are not PEM at all: not a valid PEM pair", () => {
    const certPath = join(root(), "not-a-cert.pem");
    const keyPath = join(root(), "not-a-key.pem");
    writeFileSync(certPath, "hello\n");
    writeFileSync(keyPath, "world\n");
    expect(startupError(() => checkTlsFiles({ certPath, keyPath })).message).toMatch(
      new RegExp(`^TLS certificate ${certPath} and key ${keyPath} are not a valid PEM pair \\(.+\\): fix --tls-cert / --tls-key$`),
    );
  });
});

describe("prepareDataDir", () => {
  it("creates a missing data dir and its parents, readable by the owner only (0700)", () => {
    const dataDir = join(root(), "new", "nested", "data");
    prepareDataDir(dataDir);
    expect(statSync(dataDir).isDirectory()).toBe(true);
    expect(modeOf(statSync(dataDir))).toBe(0o700);
  });

  it("an existing, writable data dir is used as it is (its mode is the operator's choice)", () => {
    const dataDir = join(root(), "existing");
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o750);
    prepareDataDir(dataDir);
    expect(modeOf(statSync(dataDir))).toBe(0o750);
  });

  it("a data dir that cannot be created (a path under a regular file, or a regular file): names it and what to do", () => {
    const file = join(root(), "plain-file");
    writeFileSync(file, "not a directory\n");
    expect(startupError(() => prepareDataDir(join(file, "data"))).message).toBe(
      `data dir ${join(file, "data")} cannot be created (ENOTDIR): create it, owned by the user running gatehouse, or choose another --data-dir`,
    );
    expect(startupError(() => prepareDataDir(file)).message).toBe(
      `data dir ${file} cannot be created (EEXIST): create it, owned by the user running gatehouse, or choose another --data-dir`,
    );
  });

  it("an existing dir this process may not write in: not writable, with the system's code", () => {
    // procfs refuses writes to /proc/sys even to root (the tests run as root; mode bits would not stop it).
    expect(startupError(() => prepareDataDir("/proc/sys")).message).toMatch(
      /^data dir \/proc\/sys is not writable \((EACCES|EROFS)\): give the user running gatehouse write access, or choose another --data-dir$/,
    );
  });
});

describe("writePrivateFile", () => {
  it("writes 0600 in a 0700 dir, also over a world-readable temporary file a crashed process with the same pid left", () => {
    const dir = join(root(), "private");
    const file = join(dir, "admin.pat");
    writePrivateFile(file, "first\n");
    expect([readFileSync(file, "utf8"), modeOf(statSync(file)), modeOf(statSync(dir))]).toEqual(["first\n", 0o600, 0o700]);
    // A container restart often gives the new process the old one's pid, and so the same temporary name.
    writeFileSync(`${file}.${process.pid}.tmp`, "left over\n", { mode: 0o644 });
    chmodSync(`${file}.${process.pid}.tmp`, 0o644);
    writePrivateFile(file, "second\n");
    expect([readFileSync(file, "utf8"), modeOf(statSync(file))]).toEqual(["second\n", 0o600]);
    expect(readdirSync(dir)).toEqual(["admin.pat"]);
  });
});
