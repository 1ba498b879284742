// checkDatabasePagesInBackground's thread (sqlite-file.ts). Plain JavaScript on purpose: a worker thread starts
// without its parent's TypeScript loader, and this needs none. It reads every page of the database file once
// (quick_check) on a read-only connection of its own, beside the running server, and says what it found.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const db = new Database(workerData.path, { fileMustExist: true, readonly: true });
let result;
try {
  db.pragma("busy_timeout = 10000");
  result = String(db.pragma("quick_check(1)", { simple: true }));
} finally {
  db.close();
}
// Said only once this connection is closed: a server stopped at once after the verdict must be the file's last
// connection, or its close keeps the log and leaves no clean-close marker (the next start would read every page again).
parentPort.postMessage({ result });
