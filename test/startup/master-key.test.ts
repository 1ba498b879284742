import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dataFiles } from "../../src/config.js";
import { checkMasterKey, loadMasterKey, PROBE_CONTEXT, readMasterKeyFile } from "../../src/startup/master-key.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { openSecret } from "../../src/support/secret-box.js";
import { bootstrappedDataDir, modeOf, openStore, useTempRoot } from "./data-dir.js";
import { thrownBy } from "../support/thrown.js";

// The master key seals secrets at rest. It is made only for a new data dir, must be 32 base64 bytes, and
// must be the key the database was sealed with; each refusal is one line naming the key file.
const root = useTempRoot("master-key");
let dirs = 0;
const newDataDir = () => {
  const dataDir = join(root(), `d${++dirs}`);
  mkdirSync(dataDir);
  return { dataDir, ...dataFiles({ dataDir }) };
};
const keyText = (key: Buffer) => `${key.toString("base64")}\n`;

const startupError = (work: () => unknown): StartupError => thrownBy(StartupError, work);

describe("loadMasterKey", () => {
  it("a new data dir: generates a random 32-byte key, base64 in a 0600 file, and returns it", () => {
    const first = newDataDir();
    const second = newDataDir();
    const key = loadMasterKey(first.masterKey, first.database);
    expect(key).toHaveLength(32);
    expect(readFileSync(first.masterKey, "utf8")).toBe(keyText(key));
    expect(modeOf(statSync(first.masterKey))).toBe(0o600);
    expect(loadMasterKey(second.masterKey, second.database).equals(key)).toBe(false);
  });

  it("an existing key file is read, never replaced (surrounding white space ignored)", () => {
    const { masterKey, database } = newDataDir();
    const key = randomBytes(32);
    writeFileSync(masterKey, `  ${key.toString("base64")}\n\n`);
    expect(loadMasterKey(masterKey, database).equals(key)).toBe(true);
    expect(readFileSync(masterKey, "utf8")).toBe(`  ${key.toString("base64")}\n\n`);
  });

  it("missing while a bootstrapped database exists: refused, and no new key file is written", async () => {
    const { files } = await bootstrappedDataDir(newDataDir().dataDir);
    rmSync(files.masterKey);
    const error = startupError(() => loadMasterKey(files.masterKey, files.database));
    expect(error.message).toBe(
      `master key ${files.masterKey} is missing but the database ${files.database} exists: restore the key file from your backup (a new key cannot open the sealed secrets)`,
    );
    expect(existsSync(files.masterKey)).toBe(false);
  });

  it("missing while the database holds only a probe value (sealed, not yet bootstrapped): refused too", async () => {
    const { dataDir, masterKey, database } = newDataDir();
    const store = openStore(dataDir);
    await checkMasterKey(store, randomBytes(32), masterKey);
    await store.close();
    expect(() => loadMasterKey(masterKey, database)).toThrow(`master key ${masterKey} is missing but the database ${database} exists`);
    expect(existsSync(masterKey)).toBe(false);
  });

  it("missing while the database file cannot be read (not a database): refused, never a new key for it", () => {
    const { masterKey, database } = newDataDir();
    writeFileSync(database, randomBytes(8192));
    expect(() => loadMasterKey(masterKey, database)).toThrow(`master key ${masterKey} is missing but the database ${database} exists`);
    expect(existsSync(masterKey)).toBe(false);
  });

  it("missing beside a database `gatehouse migrate` made (no probe, no instance): generated, as for a new dir", async () => {
    const { dataDir, masterKey, database } = newDataDir();
    await openStore(dataDir).close();
    expect(loadMasterKey(masterKey, database)).toHaveLength(32);
    expect(existsSync(masterKey)).toBe(true);
  });

  it("a key file that cannot be read: names the file and the system's code", () => {
    const { masterKey, database } = newDataDir();
    mkdirSync(masterKey);
    expect(startupError(() => loadMasterKey(masterKey, database)).message).toBe(`master key ${masterKey} cannot be read (EISDIR): check its owner and mode`);
  });

  it.each([
    ["too short", Buffer.from("short").toString("base64")],
    ["31 bytes", randomBytes(31).toString("base64")],
    ["33 bytes", randomBytes(33).toString("base64")],
    // Node decodes base64url too; a key in another alphabet is not the key file Gatehouse wrote.
    ["32 bytes in base64url", Buffer.alloc(32, 0xfb).toString("base64url")],
    ["32 bytes with text around", `key=${randomBytes(32).toString("base64")}`],
  ])("a key file that is not 32 base64 bytes (%s): refused without echoing its content", (_case, content) => {
    const { masterKey, database } = newDataDir();
    writeFileSync(masterKey, `${content}\n`);
    const error = startupError(() => loadMasterKey(masterKey, database));
    expect(error.message).toBe(`master key ${masterKey} is not 32 base64-encoded bytes: restore the right key file`);
    expect(error.message).not.toContain(content);
  });
});

describe("readMasterKeyFile", () => {
  it("gives the caller's advice for an unreadable and for a malformed file", () => {
    const { masterKey, dataDir } = newDataDir();
    const advice = { unreadable: "pass the right --master-key", malformed: "pass the key file of that data dir" };
    expect(() => readMasterKeyFile(masterKey, advice)).toThrow(`master key ${masterKey} cannot be read (ENOENT): pass the right --master-key`);
    writeFileSync(masterKey, "bm90IGEga2V5\n");
    expect(() => readMasterKeyFile(masterKey, advice)).toThrow(`master key ${masterKey} is not 32 base64-encoded bytes: pass the key file of that data dir`);
    const key = randomBytes(32);
    writeFileSync(join(dataDir, "good.key"), keyText(key));
    expect(readMasterKeyFile(join(dataDir, "good.key"), advice).equals(key)).toBe(true);
  });
});

describe("checkMasterKey", () => {
  it("a database without a probe gets one sealed under the key; the same key then passes, and the probe is kept", async () => {
    const { dataDir, masterKey } = newDataDir();
    const key = randomBytes(32);
    const store = openStore(dataDir);
    try {
      await checkMasterKey(store, key, masterKey);
      const probe = await store.getMasterKeyProbe();
      expect(probe).toBeDefined();
      expect(() => openSecret(key, probe as string, PROBE_CONTEXT)).not.toThrow();
      await checkMasterKey(store, key, masterKey);
      expect(await store.getMasterKeyProbe()).toBe(probe);
    } finally {
      await store.close();
    }
  });

  it("another key: refused with one line naming the key file, neither key in it, the probe left as it was", async () => {
    const { dataDir, masterKey } = newDataDir();
    const key = randomBytes(32);
    const other = randomBytes(32);
    const store = openStore(dataDir);
    try {
      await checkMasterKey(store, key, masterKey);
      const probe = await store.getMasterKeyProbe();
      const error = await checkMasterKey(store, other, masterKey).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(StartupError);
      expect((error as StartupError).message).toBe(`master key ${masterKey} does not open this database's sealed data: use the key this data dir was created with`);
      for (const secret of [key, other]) {
        expect((error as StartupError).message).not.toContain(secret.toString("base64"));
        expect((error as StartupError).message).not.toContain(secret.toString("hex"));
      }
      expect(await store.getMasterKeyProbe()).toBe(probe);
    } finally {
      await store.close();
    }
  });
});
