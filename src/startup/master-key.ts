import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mayHoldSealedData } from "../store/sqlite/sqlite-file.js";
import type { Store } from "../store/store.js";
import { writePrivateFile } from "../support/files.js";
import { openSecret, sealSecret } from "../support/secret-box.js";
import { StartupError } from "./startup-error.js";

export const PROBE_CONTEXT = "gatehouse:master-key-probe";

/**
 * Loads the 32-byte master key that seals secrets at rest. It is generated (mode 0600) only for a new
 * data dir: when a database already exists, a missing key means it was lost or not restored, and a
 * new one would make every sealed secret unreadable — so that start is refused.
 */
export function loadMasterKey(keyPath: string, databasePath: string): Buffer {
  if (!existsSync(keyPath)) {
    if (mayHoldSealedData(databasePath)) {
      throw new StartupError(
        `master key ${keyPath} is missing but the database ${databasePath} exists: restore the key file from your backup (a new key cannot open the sealed secrets)`,
      );
    }
    writePrivateFile(keyPath, `${randomBytes(32).toString("base64")}\n`);
  }
  return readMasterKeyFile(keyPath, { unreadable: "check its owner and mode", malformed: "restore the right key file" });
}

/** Reads and checks a master key file (32 base64-encoded bytes); `advice` says what to do when it is not. */
export function readMasterKeyFile(path: string, advice: { unreadable: string; malformed: string }): Buffer {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (error) {
    // Stryker disable next-line StringLiteral: unreachable: every error node:fs throws has a code
    throw new StartupError(`master key ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"}): ${advice.unreadable}`, { cause: error });
  }
  const key = Buffer.from(text, "base64");
  if (key.length !== 32 || !/^[A-Za-z0-9+/]+=*$/.test(text)) throw new StartupError(`master key ${path} is not 32 base64-encoded bytes: ${advice.malformed}`);
  return key;
}

/**
 * Checks that `key` is the key this database was sealed with, by opening the probe value sealed at
 * its first start; a database without a probe (new, or older than the probe) gets one now.
 */
export async function checkMasterKey(store: Store, key: Buffer, keyPath: string): Promise<void> {
  let probe = await store.getMasterKeyProbe();
  if (probe === undefined) {
    // Stryker disable next-line StringLiteral: the probe's content is never compared: that it opens under the key (its authentication tag) is the check
    await store.setMasterKeyProbe(sealSecret(key, "gatehouse", PROBE_CONTEXT));
    // Read back: a replica that started at the same time may have stored its probe first (the first one is kept), and
    // this key must open that one.
    probe = await store.getMasterKeyProbe();
  }
  try {
    openSecret(key, probe ?? "", PROBE_CONTEXT);
  } catch (error) {
    throw new StartupError(`master key ${keyPath} does not open this database's sealed data: use the key this data dir was created with`, { cause: error });
  }
}

/** The master key of a shared (PostgreSQL) database: read from the file every replica is given, never generated. */
export function loadSharedMasterKey(keyPath: string): Buffer {
  return readMasterKeyFile(keyPath, {
    unreadable: "every replica of a shared database needs the same key file (--master-key-file); check its path, owner and mode",
    malformed: "give every replica the same key file, 32 base64-encoded bytes (e.g. `openssl rand -base64 32`)",
  });
}
