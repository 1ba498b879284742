// checkDatabasePagesInBackground's thread (sqlite-file.ts). Plain JavaScript on purpose: a worker thread starts
// without its parent's TypeScript loader, and this needs none. It reads every page of the database file once
// (quick_check) on a read-only connection of its own, beside the running server, and says what it found.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const db = new Database(workerData.path, { fileMustExist: true, readonly: true });
try {
  db.pragma("busy_timeout = 10000");
  parentPort.postMessage({ result: String(db.pragma("quick_check(1)", { simple: true })) });
} finally {
  db.close();
}
