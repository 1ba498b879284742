import { copyFileSync, chmodSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { StartupError } from "../startup/startup-error.js";
import { openSecret } from "../support/secret-box.js";
import { writePrivateFile } from "../support/files.js";
import { readMasterKeyProbe } from "../store/sqlite/sqlite-file.js";
import { describeBackup } from "./backup.js";
import { PROBE_CONTEXT, readMasterKeyFile } from "../startup/master-key.js";

export interface RestoreInput {
  from: string;
  dataDir: string;
  masterKeyFile: string;
}

/**
 * Restores a backup into a new data dir, with the master key it was sealed under. Only into an empty
 * (or missing) dir, so a restore never mixes with or overwrites live data; the key is checked against
 * the backup's probe value before anything is written.
 */
export function restoreDatabase(input: RestoreInput, files: { database: string; masterKey: string }) {
  if (existsSync(input.dataDir) && readdirSync(input.dataDir).length > 0) {
    throw new StartupError(`data dir ${input.dataDir} is not empty: restore only into an empty data dir (stop the server and move the old one aside)`);
  }
  const summary = describeBackup(input.from);
  const key = readMasterKeyFile(input.masterKeyFile, {
    unreadable: "pass the key file of the backed-up data dir with --master-key",
    malformed: "pass the key file of the backed-up data dir",
  });
  const probe = readMasterKeyProbe(input.from);
  if (probe !== undefined) {
    try {
      openSecret(key, probe, PROBE_CONTEXT);
    } catch (error) {
      throw new StartupError(`master key ${input.masterKeyFile} does not open this backup's sealed data: use the key of the data dir the backup was taken from`, { cause: error });
    }
  }
  mkdirSync(input.dataDir, { recursive: true, mode: 0o700 });
  copyFileSync(input.from, files.database);
  chmodSync(files.database, 0o600);
  writePrivateFile(files.masterKey, `${key.toString("base64")}\n`);
  return summary;
}
