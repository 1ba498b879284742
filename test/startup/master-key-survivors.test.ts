import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dataFiles } from "../../src/config.js";
import { loadMasterKey, loadSharedMasterKey } from "../../src/startup/master-key.js";
import { StartupError } from "../../src/startup/startup-error.js";
import { thrownBy } from "../support/thrown.js";
import { useTempRoot } from "./data-dir.js";

// The master key file holds 32 bytes in base64 (the standard alphabet, as Gatehouse writes it) and nothing
// else: a file whose text is more than that, even when Node would decode 32 bytes out of it, is not the
// key file Gatehouse wrote, and the start is refused.
const root = useTempRoot("master-key-survivors");
let dirs = 0;
const newDataDir = () => {
  const dataDir = join(root(), `d${++dirs}`);
  mkdirSync(dataDir);
  return dataFiles({ dataDir });
};

describe("a key file that decodes to 32 bytes but is not only standard base64", () => {
  const key = Buffer.concat([Buffer.alloc(3), Buffer.alloc(29, 0xfb)]);
  it.each([
    // Starts like standard base64 ("AAAA"), then "-" and "_" of the URL-safe alphabet.
    ["base64url after a standard start", key.toString("base64url")],
    ["the key followed by a comment", `${randomBytes(32).toString("base64")} # gatehouse master key`],
    ["the key followed by a second word", `${randomBytes(32).toString("base64")} ${randomBytes(6).toString("base64")}`],
  ])("%s: refused, without echoing the content", (_case, content) => {
    expect(Buffer.from(content.split(" ")[0]!, "base64")).toHaveLength(32);
    const { masterKey, database } = newDataDir();
    writeFileSync(masterKey, `${content}\n`);
    const error = thrownBy(StartupError, () => loadMasterKey(masterKey, database));
    expect(error.message).toBe(`master key ${masterKey} is not 32 base64-encoded bytes: restore the right key file`);
    expect(error.message).not.toContain(content);
  });
});

describe("the padding of a key file", () => {
  // Gatehouse writes the key padded ("…=", as `openssl rand -base64 32` does); a key pasted from a tool that strips
  // the padding is the same 32 bytes and is taken as it is.
  it.each([
    ["padded, as Gatehouse writes it", (key: Buffer) => key.toString("base64")],
    ["without its padding", (key: Buffer) => key.toString("base64").replace(/=+$/, "")],
  ])("%s: accepted, and it is the key written", (_case, encode) => {
    const key = randomBytes(32);
    const { masterKey, database } = newDataDir();
    writeFileSync(masterKey, `${encode(key)}\n`);
    expect(loadMasterKey(masterKey, database).equals(key)).toBe(true);
  });
});

describe("the key file of a shared (PostgreSQL) database", () => {
  // Every replica reads the same file and none generates one: the advice says so.
  it("missing: refused with what every replica needs", () => {
    const path = join(root(), "no-such-shared.key");
    const error = thrownBy(StartupError, () => loadSharedMasterKey(path));
    expect(error.message).toBe(
      `master key ${path} cannot be read (ENOENT): every replica of a shared database needs the same key file (--master-key-file); check its path, owner and mode`,
    );
  });

  it("not a key: refused with how to make one for every replica", () => {
    const path = join(root(), "short-shared.key");
    writeFileSync(path, `${randomBytes(16).toString("base64")}\n`);
    const error = thrownBy(StartupError, () => loadSharedMasterKey(path));
    expect(error.message).toBe(
      `master key ${path} is not 32 base64-encoded bytes: give every replica the same key file, 32 base64-encoded bytes (e.g. \`openssl rand -base64 32\`)`,
    );
  });

  it("a right one: its 32 bytes", () => {
    const path = join(root(), "right-shared.key");
    const key = randomBytes(32);
    writeFileSync(path, `${key.toString("base64")}\n`);
    expect(loadSharedMasterKey(path).equals(key)).toBe(true);
  });
});
