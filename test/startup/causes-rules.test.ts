import Database from "better-sqlite3";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkTlsFiles, prepareDataDir, readStartupFile } from "../../src/startup/files.js";
import { checkMasterKey, readMasterKeyFile } from "../../src/startup/master-key.js";
import { openDatabase } from "../../src/startup/open-database.js";
import { StartupError } from "../../src/startup/startup-error.js";
import type { Store } from "../../src/store/store.js";
import { makeSelfSignedCertificate } from "../support/tls.js";
import { thrownBy } from "../support/thrown.js";
import { openStore, useTempRoot } from "./data-dir.js";

// startup-error.ts: a start-up failure is one line for the operator, and "the underlying error (if any) is kept
// as `cause` for the debug log" — for every failure of the start-up steps that has one. open-database.ts: what
// the opener throws, whatever it is (also not an Error at all), becomes that one line.
const root = useTempRoot("startup-causes");
let dirs = 0;
const fresh = (name: string) => join(root(), `${name}-${++dirs}`);
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const startupError = (work: () => unknown): StartupError => thrownBy(StartupError, work);
const codeOf = (error: StartupError) => (error.cause as { code?: string } | undefined)?.code;

describe("files named by settings", () => {
  it("an unreadable file keeps the system's error", () => {
    const missing = fresh("missing.pem");
    const error = startupError(() => readStartupFile(missing, "TLS certificate", "--tls-cert"));
    expect(codeOf(error)).toBe("ENOENT");
  });

  it("a certificate and key that do not belong together keep OpenSSL's error", () => {
    const first = makeSelfSignedCertificate();
    const second = makeSelfSignedCertificate();
    const error = startupError(() => checkTlsFiles({ certPath: first.certPath, keyPath: second.keyPath }));
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.message).toContain((error.cause as Error).message);
  });

  it("a data dir that cannot be created, or not written in, keeps the system's error", () => {
    const file = fresh("plain-file");
    writeFileSync(file, "not a directory\n");
    expect(codeOf(startupError(() => prepareDataDir(join(file, "data"))))).toBe("ENOTDIR");
    expect(codeOf(startupError(() => prepareDataDir("/proc/sys")))).toMatch(/^(EACCES|EROFS)$/);
  });
});

describe("the master key", () => {
  it("an unreadable key file keeps the system's error", () => {
    const missing = fresh("missing.key");
    expect(codeOf(startupError(() => readMasterKeyFile(missing, { unreadable: "u", malformed: "m" })))).toBe("ENOENT");
  });

  it("a key that does not open the database's probe keeps the failed opening", async () => {
    const store = openStore(fresh("data"));
    stores.push(store);
    await checkMasterKey(store, randomBytes(32), "first.key");
    const error = await checkMasterKey(store, randomBytes(32), "other.key").then(
      () => expect.fail("another key was accepted"),
      (e: unknown) => e as StartupError,
    );
    expect(error).toBeInstanceOf(StartupError);
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.cause).not.toBeInstanceOf(StartupError);
  });
});

describe("opening the database", () => {
  const opening = (database: string, thrown: unknown) =>
    startupError(() =>
      openDatabase(() => {
        throw thrown;
      }, database),
    );

  it("each refusal keeps what the opener threw", () => {
    const database = join(fresh("d"), "gatehouse.db");
    for (const code of ["GATEHOUSE_SCHEMA_NEWER", "SQLITE_CANTOPEN", "SQLITE_NOTADB"]) {
      const thrown = Object.assign(new Error(`${code} happened`), { code });
      expect(opening(database, thrown).cause, code).toBe(thrown);
    }
  });

  it("a migration that fails on an existing database keeps the failure", () => {
    const dataDir = fresh("existing");
    mkdirSync(dataDir);
    const database = join(dataDir, "gatehouse.db");
    const db = new Database(database);
    db.exec("CREATE TABLE t (x)");
    db.close();
    const thrown = new Error("no such column: y");
    const error = opening(database, thrown);
    expect(error.message).toBe(`database ${database} could not be migrated (no such column: y): restore a backup or run the matching Gatehouse version`);
    expect(error.cause).toBe(thrown);
  });

  it("something thrown that is no Error at all (null, a string) is still one line", () => {
    const database = join(fresh("d"), "gatehouse.db");
    expect(opening(database, null).message).toBe(`database ${database} could not be created (null)`);
    expect(opening(database, undefined).message).toBe(`database ${database} could not be created (undefined)`);
    expect(opening(database, "disk on fire\nsecond line").message).toBe(`database ${database} could not be created (disk on fire)`);
  });
});
