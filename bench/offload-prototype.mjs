/**
 * An experiment, not the bench: would taking a durable write's SQLite work off the event loop lift its rate over the
 * no-op on this machine (issue 12's "durable writes ≥ 60 % of the no-op", two cores, wrk on the same box)?
 *
 *   node bench/offload-prototype.mjs [rounds] [framework µs] [write µs]      (defaults: 3 150 75)
 *
 * Three servers of a few lines each (node:http, no framework), one at a time, each loaded by wrk at 16 connections
 * for 2 s of warm-up and 6 s measured, in turns, `rounds` times:
 * - `noop`: answers after `framework µs` of CPU, which stands in for Gatehouse's per-call cost (its no-op costs
 *   about 180-200 µs of CPU a call here, this prototype's 190-220 with 150);
 * - `main`: the no-op's work, then `write µs` of CPU (a write's work besides SQL: decoding, checks, rows), then an
 *   UpdateApplication-like SQL write (a row read, a version query, an update, an event insert, each in a savepoint)
 *   in a group commit: one transaction a turn of the event loop, WAL, answered after the log's fdatasync, which
 *   runs on the thread pool; as Gatehouse does it, on the main thread;
 * - `worker`: the same, but the transactions and the fdatasync run on a worker thread (one transaction for every
 *   batch queued while it was busy), and the main thread keeps the HTTP, the CPU stand-ins and the answers.
 * Per run: req/s, the ratio over the round's no-op, and the CPU per call of the process, of its main thread alone,
 * and of the whole box. Linux only (/proc); needs wrk (`npm run bench` installs it).
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS apps (id TEXT PRIMARY KEY, name TEXT NOT NULL, changed TEXT NOT NULL, version INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, agg_type TEXT, agg_id TEXT, version INTEGER,
    type TEXT, payload TEXT, created TEXT, owner TEXT);
  CREATE INDEX IF NOT EXISTS events_aggregate ON events (agg_type, agg_id, version);
  CREATE INDEX IF NOT EXISTS events_type ON events (type, seq);
  INSERT OR IGNORE INTO apps VALUES ('app-1', 'first', 'now', 1);`;

/** The store of one thread: its own connection and prepared statements. */
function openStore(file) {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  // The sync is the log's fdatasync after each transaction, as in Gatehouse's group commit.
  db.pragma("synchronous = NORMAL");
  db.exec(SCHEMA);
  const statement = (sql) => db.prepare(sql);
  const s = {
    begin: statement("BEGIN IMMEDIATE"),
    commit: statement("COMMIT"),
    savepoint: statement("SAVEPOINT call"),
    release: statement("RELEASE call"),
    read: statement("SELECT * FROM apps WHERE id = ?"),
    version: statement("SELECT max(version) AS v FROM events WHERE agg_type = 'app' AND agg_id = ?"),
    update: statement("UPDATE apps SET name = ?, changed = ?, version = version + 1 WHERE id = ?"),
    insert: statement("INSERT INTO events (agg_type, agg_id, version, type, payload, created, owner) VALUES ('app', ?, ?, 'app.changed', ?, ?, 'org-1')"),
  };
  let walFd;
  return {
    /** One transaction for all `names`; the events' sequence numbers. */
    write(names) {
      const sequences = [];
      s.begin.run();
      for (const name of names) {
        s.savepoint.run();
        s.read.get("app-1");
        const version = s.version.get("app-1").v ?? 0;
        const now = new Date().toISOString();
        s.update.run(name, now, "app-1");
        sequences.push(Number(s.insert.run("app-1", version + 1, JSON.stringify({ name }), now).lastInsertRowid));
        s.release.run();
      }
      s.commit.run();
      return sequences;
    },
    sync(done) {
      walFd ??= fs.openSync(`${file}-wal`, "r+");
      fs.fdatasync(walFd, done);
    },
  };
}

/** Calls `flush(items)` once per turn of the event loop with everything queued in that turn. */
function perTurn(flush) {
  let queue = [];
  return (item) => {
    if (queue.push(item) === 1)
      setImmediate(() => {
        const items = queue;
        queue = [];
        flush(items);
      });
  };
}

const burn = (us) => {
  const end = process.hrtime.bigint() + BigInt(Math.round(us * 1000));
  while (process.hrtime.bigint() < end);
};

function serveWorker() {
  const store = openStore(workerData.file);
  const enqueue = perTurn((batches) => {
    const sequences = store.write(batches.flatMap((b) => b.names));
    store.sync(() => {
      let at = 0;
      for (const { id, names } of batches) {
        parentPort.postMessage({ id, sequences: sequences.slice(at, (at += names.length)) });
      }
    });
  });
  parentPort.on("message", enqueue);
}

function serve(mode, port, file, frameworkUs, writeUs) {
  let write;
  if (mode === "main") {
    const store = openStore(file);
    write = perTurn((calls) => {
      const sequences = store.write(calls.map((c) => c.name));
      store.sync(() => calls.forEach((c, i) => c.resolve(sequences[i])));
    });
  } else if (mode === "worker") {
    openStore(file); // the schema, before the worker's first write
    const worker = new Worker(new URL(import.meta.url), { workerData: { file } });
    const waiting = new Map();
    let nextId = 0;
    worker.on("message", ({ id, sequences }) => {
      waiting.get(id).forEach((c, i) => c.resolve(sequences[i]));
      waiting.delete(id);
    });
    write = perTurn((calls) => {
      waiting.set(nextId, calls);
      worker.postMessage({ id: nextId++, names: calls.map((c) => c.name) });
    });
  }
  http
    .createServer((req, res) => {
      const chunks = [];
      req.on("data", (chunk) => chunks.push(chunk));
      req.on("end", async () => {
        burn(frameworkUs);
        const { name } = JSON.parse(Buffer.concat(chunks).toString());
        let answer = { ok: true };
        if (write) {
          burn(writeUs);
          answer = { sequence: await new Promise((resolve) => write({ name, resolve })) };
        }
        const body = JSON.stringify(answer);
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
      });
    })
    .listen(port, "127.0.0.1", () => process.stdout.write("listening\n"));
}

const ticks = Number(execFileSync("getconf", ["CLK_TCK"]).toString());
/** CPU seconds of a /proc stat line's utime + stime. */
const cpuOf = (path) => {
  const fields = fs.readFileSync(path, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticks;
};
const boxBusy = () => {
  const [, user, nice, system, , , irq, softirq] = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq) / ticks;
};

async function measure(mode, frameworkUs, writeUs, dir) {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const file = join(dir, `${mode}.db`);
  const server = spawn(process.execPath, [new URL(import.meta.url).pathname, "--serve", mode, String(port), file, String(frameworkUs), String(writeUs)], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    server.stdout.once("data", resolve);
    server.once("exit", (code) => reject(new Error(`the ${mode} server exited (${code})`)));
  });
  const script = join(dir, "body.lua");
  fs.writeFileSync(script, `wrk.method = "POST"\nwrk.headers["content-type"] = "application/json"\nlocal n = 0\nrequest = function() n = n + 1; return wrk.format(nil, nil, nil, '{"name":"app-' .. n .. '-' .. math.random(1e9) .. '"}') end\n`);
  const wrk = (seconds) => execFileSync("wrk", ["-t2", "-c16", `-d${seconds}s`, "-s", script, `http://127.0.0.1:${port}/`]).toString();
  wrk(2);
  const stat = `/proc/${server.pid}/stat`;
  const mainStat = `/proc/${server.pid}/task/${server.pid}/stat`;
  const before = { process: cpuOf(stat), main: cpuOf(mainStat), box: boxBusy() };
  const out = wrk(6);
  const after = { process: cpuOf(stat), main: cpuOf(mainStat), box: boxBusy() };
  server.kill();
  await new Promise((resolve) => server.once("exit", resolve));
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(`${file}${suffix}`, { force: true });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]);
  const perCall = (key) => ((after[key] - before[key]) * 1e6) / (rps * 6);
  return { mode, rps, processUs: perCall("process"), mainUs: perCall("main"), boxUs: perCall("box"), boxCores: (after.box - before.box) / 6 };
}

if (!isMainThread) serveWorker();
else if (process.argv[2] === "--serve") {
  const [, , , mode, port, file, frameworkUs, writeUs] = process.argv;
  serve(mode, Number(port), file, Number(frameworkUs), Number(writeUs));
} else {
  const [rounds = 3, frameworkUs = 150, writeUs = 75] = process.argv.slice(2).map(Number);
  const dir = fs.mkdtempSync(join(tmpdir(), "gatehouse-offload-"));
  try {
    console.log(`framework stand-in ${frameworkUs} µs, a write's other work ${writeUs} µs; 16 connections, 2 + 6 s a run`);
    console.log("round  mode    req/s  ratio  process µs/call  main thread µs/call  box µs/call  box busy cores");
    for (let round = 1; round <= rounds; round++) {
      let noop;
      for (const mode of ["noop", "main", "worker"]) {
        const r = await measure(mode, frameworkUs, writeUs, dir);
        noop ??= r.rps;
        const cells = [String(round).padStart(5), mode.padEnd(6), r.rps.toFixed(0).padStart(6), (r.rps / noop).toFixed(2).padStart(6)];
        console.log(`${cells.join("  ")}  ${r.processUs.toFixed(0).padStart(15)}  ${r.mainUs.toFixed(0).padStart(19)}  ${r.boxUs.toFixed(0).padStart(11)}  ${r.boxCores.toFixed(2).padStart(14)}`);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
