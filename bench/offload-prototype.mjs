/**
 * An experiment, not the bench: would taking a durable write's work off the event loop lift its rate over the no-op
 * on this machine (issue 12's "durable writes ≥ 60 % of the no-op", two cores, wrk on the same box)?
 *
 *   node bench/offload-prototype.mjs [rounds] [framework µs] [write µs]      (defaults: 3 150 75)
 *   node bench/offload-prototype.mjs --paced [rounds] [framework µs] [write µs] [KB of objects a call]   (p99 at half of saturation)
 *
 * Four servers of a few lines each (node:http, no framework), one at a time, each loaded by wrk at 16 connections
 * for 2 s of warm-up and 6 s measured, in turns, `rounds` times:
 * - `noop`: answers after `framework µs` of CPU work, which stands in for Gatehouse's per-call cost;
 * - `main`: the same, then `write µs` of CPU work (a write's work besides SQL: decoding, checks, building rows), then
 *   an UpdateApplication-like SQL write (a row read, a version query, an update, an event insert, in a savepoint),
 *   all on the main thread, as Gatehouse does it;
 * - `sql-thread`: the `write µs` stay on the main thread; the SQL, its transactions and the syncs run on a worker
 *   thread, which answers with one message per turn of its own, once the sync that covers that turn is done;
 * - `cmd-thread`: whole commands on the worker thread (the `write µs` too): the main thread keeps only the HTTP, the
 *   framework's work and the answers.
 * Every writing mode commits as Gatehouse's group commit does (src/store/sqlite/group-commit.ts): one transaction a
 * turn of the event loop, the log written without a sync (WAL, synchronous=NORMAL), and one fdatasync of the log at a
 * time on libuv's thread pool, shared by every commit made before it started; a call is answered only after such a
 * sync.
 *
 * The CPU work is a loop of a calibrated number of iterations, not a wait on the clock, so a preempted thread still
 * has all its work to do. Each round measures the no-op first and last; a write's ratio divides by the mean of the
 * two. Per run: req/s, the ratio, CPU µs per call of the process, of its
 * main thread, and of the whole box (/proc/stat), the main thread's wait for a core (schedstat's run delay) per call,
 * and the box's busy cores. Linux only (/proc); needs wrk (`npm run bench` installs it).
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const SCRIPT = fileURLToPath(import.meta.url);
const MODES = ["noop", "main", "sql-thread", "cmd-thread"];
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS apps (id TEXT PRIMARY KEY, name TEXT NOT NULL, changed TEXT NOT NULL, version INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, agg_type TEXT, agg_id TEXT, version INTEGER,
    type TEXT, payload TEXT, created TEXT, owner TEXT);
  CREATE INDEX IF NOT EXISTS events_aggregate ON events (agg_type, agg_id, version);
  CREATE INDEX IF NOT EXISTS events_type ON events (type, seq);
  INSERT OR IGNORE INTO apps VALUES ('app-1', 'first', 'now', 1);`;

/** CPU work: `iterations` rounds of a loop the JIT cannot drop. */
let sink = 0;
function work(iterations) {
  let x = sink;
  for (let i = 0; i < iterations; i++) x = (x * 1103515245 + 12345) % 2147483648;
  sink = x;
}
/** Iterations per µs on a core of its own: the best of several short trials (a preempted trial only looks slower). */
function calibrate() {
  let best = 0;
  for (let trial = 0; trial < 30; trial++) {
    const started = process.hrtime.bigint();
    work(200_000);
    best = Math.max(best, 200_000 / (Number(process.hrtime.bigint() - started) / 1000));
  }
  return best;
}

/**
 * About `kb` KB of small objects and strings, as a call's decoded messages, contexts and rows are: a list of records of
 * five fields each, one of them a fresh string (about 100 bytes a record on V8's heap).
 */
function garbage(kb) {
  const records = [];
  for (let i = 0; i < kb * 10; i++) records.push({ id: i, name: `record-${i}-${sink}`, state: 1, next: null, at: i });
  return records;
}

/** One thread's store: its connection, prepared statements, and group commit. */
function openStore(file) {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
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
  let syncing = false;
  let unsynced = []; // callbacks of commits made since the running sync started
  const startSync = () => {
    syncing = true;
    const served = unsynced;
    unsynced = [];
    walFd ??= fs.openSync(`${file}-wal`, "r+");
    fs.fdatasync(walFd, (error) => {
      if (error) throw error;
      syncing = false;
      if (unsynced.length > 0) startSync();
      for (const done of served) done();
    });
  };
  return {
    /** One transaction for every call in `names`, each after `workIterations` of CPU work; their event sequences. */
    write(names, workIterations = 0) {
      const sequences = [];
      s.begin.run();
      for (const name of names) {
        work(workIterations);
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
    /** Calls `done` once a sync that started after this call's commits is over. */
    durable(done) {
      unsynced.push(done);
      if (!syncing) startSync();
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

function serveWorker() {
  const { file, workIterations } = workerData;
  const store = openStore(file);
  parentPort.on(
    "message",
    perTurn((batches) => {
      const sequences = store.write(
        batches.flatMap((b) => b.names),
        workIterations,
      );
      store.durable(() => {
        let at = 0;
        parentPort.postMessage(batches.map(({ id, names }) => ({ id, sequences: sequences.slice(at, (at += names.length)) })));
      });
    }),
  );
}

function serve(mode, file, frameworkIterations, writeIterations, garbageKb = 0) {
  let write;
  if (mode === "main") {
    const store = openStore(file);
    write = perTurn((calls) => {
      const sequences = store.write(calls.map((c) => c.name));
      store.durable(() => calls.forEach((c, i) => c.resolve(sequences[i])));
    });
  } else if (mode !== "noop") {
    openStore(file); // the schema, before the worker's first write
    const worker = new Worker(SCRIPT, { workerData: { file, workIterations: mode === "cmd-thread" ? writeIterations : 0 } });
    const waiting = new Map();
    let nextId = 0;
    worker.on("message", (answers) => {
      for (const { id, sequences } of answers) {
        waiting.get(id).forEach((c, i) => c.resolve(sequences[i]));
        waiting.delete(id);
      }
    });
    write = perTurn((calls) => {
      waiting.set(nextId, calls);
      worker.postMessage({ id: nextId++, names: calls.map((c) => c.name) });
    });
  }
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", async () => {
      // A call's own objects (a decoded request, its context, the rows it reads), alive until it is answered.
      const held = garbage(garbageKb);
      work(frameworkIterations);
      const { name } = JSON.parse(Buffer.concat(chunks).toString());
      let answer = { ok: true };
      if (write) {
        if (mode !== "cmd-thread") work(writeIterations);
        answer = { sequence: await new Promise((resolve) => write({ name, resolve })) };
      }
      answer.held = held.length;
      const body = JSON.stringify(answer);
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
    });
  });
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
}

const ticks = Number(execFileSync("getconf", ["CLK_TCK"]).toString());
/** CPU seconds (utime + stime) of a /proc/…/stat file; the command name may hold spaces and parentheses. */
const cpuOf = (path) => {
  const text = fs.readFileSync(path, "utf8");
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / ticks;
};
/** Seconds the thread waited on a run queue for a core (schedstat's second field, in ns). */
const runDelayOf = (path) => Number(fs.readFileSync(path, "utf8").split(" ")[1]) / 1e9;
const boxBusy = () => {
  const [, user, nice, system, , , irq, softirq] = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq) / ticks;
};

/** wrk's pacing (bench/load/wrk-sequence.lua's): one request per interval (ms, per thread) on an absolute schedule. */
const PACING = `local ffi = require("ffi")
ffi.cdef [[ typedef struct { long tv_sec; long tv_nsec; } ts_t; int clock_gettime(int, ts_t *); ]]
local ts = ffi.new("ts_t")
local interval, slot
init = function(args) interval = tonumber(args[1]) end
delay = function()
  ffi.C.clock_gettime(1, ts)
  local now = tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  if not slot or slot < now - interval then slot = now end
  local wait = slot - now
  slot = slot + interval
  return math.max(0, math.floor(wait))
end
`;

async function measure(mode, frameworkIterations, writeIterations, dir, rate = 0, garbageKb = 0) {
  const file = join(dir, `${mode}.db`);
  const server = spawn(process.execPath, [SCRIPT, "--serve", mode, file, String(frameworkIterations), String(writeIterations), String(garbageKb)], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    server.stdout.once("data", (data) => resolve(Number(String(data).trim())));
    server.once("exit", (code) => reject(new Error(`the ${mode} server exited (${code})`)));
  });
  const script = join(dir, "body.lua");
  fs.writeFileSync(script, `wrk.method = "POST"\nwrk.headers["content-type"] = "application/json"\nlocal n = 0\nrequest = function() n = n + 1; return wrk.format(nil, nil, nil, '{"name":"app-' .. n .. '-' .. math.random(1e9) .. '"}') end\n${rate > 0 ? PACING : ""}`);
  // Paced: each of wrk's two threads sends one request per interval on an absolute schedule, as the bench's paced runs do.
  const wrk = (seconds) =>
    execFileSync("wrk", ["-t2", "-c16", `-d${seconds}s`, "--latency", "-s", script, `http://127.0.0.1:${port}/`, ...(rate > 0 ? ["--", String(2000 / rate)] : [])]).toString();
  wrk(2);
  const task = `/proc/${server.pid}/task/${server.pid}`;
  const sample = () => ({ process: cpuOf(`/proc/${server.pid}/stat`), main: cpuOf(`${task}/stat`), wait: runDelayOf(`${task}/schedstat`), box: boxBusy(), at: process.hrtime.bigint() });
  const before = sample();
  const out = wrk(6);
  const after = sample();
  if (server.exitCode !== null) throw new Error(`the ${mode} server died during its run (${server.exitCode})`);
  const broken = /Socket errors:.*|Non-2xx or 3xx responses:.*/.exec(out);
  if (broken) throw new Error(`the ${mode} run was not clean: ${broken[0]}`);
  server.kill();
  await new Promise((resolve) => server.once("exit", resolve));
  for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(`${file}${suffix}`, { force: true });
  const [, requests, duration, unit] = /(\d+) requests in ([\d.]+)(m?s)/.exec(out);
  const seconds = Number(duration) / (unit === "ms" ? 1000 : 1);
  const perCall = (key) => ((after[key] - before[key]) * 1e6) / Number(requests);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p99Ms = p99 ? Number(p99[1]) * { us: 0.001, ms: 1, s: 1000 }[p99[2]] : NaN;
  return { p99Ms, rps: Number(requests) / seconds, processUs: perCall("process"), mainUs: perCall("main"), waitUs: perCall("wait"), boxUs: perCall("box"), boxCores: (after.box - before.box) / (Number(after.at - before.at) / 1e9) };
}

if (!isMainThread) serveWorker();
else if (process.argv[2] === "--serve") {
  const [, , , mode, file, frameworkIterations, writeIterations, garbageKb] = process.argv;
  serve(mode, file, Number(frameworkIterations), Number(writeIterations), Number(garbageKb));
} else if (process.argv[2] === "--paced") {
  await pacedRounds(...process.argv.slice(3).map(Number));
} else {
  const [rounds = 3, frameworkUs = 150, writeUs = 75] = process.argv.slice(2).map(Number);
  const perUs = calibrate();
  const dir = fs.mkdtempSync(join(tmpdir(), "gatehouse-offload-"));
  try {
    console.log(`framework ${frameworkUs} µs, a write's other work ${writeUs} µs (${perUs.toFixed(0)} iterations a µs); 16 connections, 2 + 6 s a run`);
    console.log("round  mode        req/s  ratio  process µs/call  main thread µs/call  its wait µs/call  box µs/call  box busy cores");
    const print = (round, mode, r, ratio) => {
      const cells = [String(round).padStart(5), mode.padEnd(10), r.rps.toFixed(0).padStart(6), ratio === undefined ? "    -" : ratio.toFixed(2).padStart(5)];
      const figures = [[r.processUs, 15], [r.mainUs, 19], [r.waitUs, 16], [r.boxUs, 11], [r.boxCores, 14, 2]].map(([v, w, d = 0]) => v.toFixed(d).padStart(w));
      console.log([...cells, ...figures].join("  "));
    };
    const run = (mode) => measure(mode, Math.round(frameworkUs * perUs), Math.round(writeUs * perUs), dir);
    for (let round = 1; round <= rounds; round++) {
      // The no-op before and after the writes: the machine's speed moves within a round.
      const first = await run("noop");
      const writes = [];
      for (const mode of MODES.filter((m) => m !== "noop")) writes.push([mode, await run(mode)]);
      const last = await run("noop");
      const noop = (first.rps + last.rps) / 2;
      print(round, "noop", first);
      for (const [mode, r] of writes) print(round, mode, r, r.rps / noop);
      print(round, "noop", last);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `--paced [rounds] [framework µs] [write µs] [KB]`: each server's p99 at half of its own saturation (issue 12's "p99 ≤
 * 10 ms at half of saturation"), measured as the bench does (wrk's latency, which leaves the pacing's wait out): first
 * saturated, then paced at half that rate, 2 + 6 s each. With `KB`, every call of every server also makes about that
 * much of small objects and holds them until it is answered.
 */
async function pacedRounds(rounds = 3, frameworkUs = 150, writeUs = 75, garbageKb = 0) {
  const perUs = calibrate();
  const dir = fs.mkdtempSync(join(tmpdir(), "gatehouse-offload-"));
  try {
    console.log(`framework ${frameworkUs} µs, a write's other work ${writeUs} µs, ${garbageKb} KB of objects a call; 16 connections; p99 saturated, then paced at half`);
    console.log("round  mode        saturated req/s  p99 ms  paced req/s  p99 ms  process µs/call saturated, paced");
    for (let round = 1; round <= rounds; round++) {
      for (const mode of ["noop", "main", "cmd-thread"]) {
        const run = (rate) => measure(mode, Math.round(frameworkUs * perUs), Math.round(writeUs * perUs), dir, rate, garbageKb);
        const full = await run();
        const half = await run(full.rps / 2);
        const cells = [String(round).padStart(5), mode.padEnd(10), full.rps.toFixed(0).padStart(15), full.p99Ms.toFixed(1).padStart(6)];
        cells.push(half.rps.toFixed(0).padStart(11), half.p99Ms.toFixed(1).padStart(6), `${full.processUs.toFixed(0).padStart(15)}, ${half.processUs.toFixed(0)}`);
        console.log(cells.join("  "));
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
