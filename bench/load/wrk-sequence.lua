-- wrk script: sends a prepared sequence of requests, each with its own body, so a write can carry a
-- new value on every request (wrk itself would repeat one body).
--
--   wrk -t T -c C -d Ds -s wrk-sequence.lua URL -- <requests file> <T> [interval ms per thread]
--
-- The file has one request per line: "<1 if a 2xx answer is expected, else 0>\t<path>\t<body>".
-- Its lines are dealt to the threads in blocks of BLOCK lines (block k goes to thread k mod T), so
-- requests the bench placed close together in the sequence (a wrong code, then the right code for
-- the same user) are sent by the same thread, in that order, about BLOCK/2 requests apart.
-- Headers (authorization, content type) come from wrk's -H options. With an interval, each thread
-- paces its requests to one per interval (the rate-limited runs); wrk's latency leaves the wait out.
-- done() prints one line "BENCH-JSON {...}" for the bench to read.

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock_id, bench_timespec *tp);
]]
local ts = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local BLOCK = 128

-- setup() runs in wrk's main Lua state, once per thread, before that thread's init().
local threads = {}
function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

-- Thread state (each thread has its own Lua state).
requests = {}
expected = {}
count = 0
next_index = 1
issued = 0
issued_failures = 0
wrapped = 0
local interval
local next_slot

-- Paces one thread to one request per interval on an absolute schedule (at most one interval of
-- backlog is kept). Installed as delay() only for paced runs: wrk routes every request through a timer
-- when delay() exists at all.
local function paced_delay()
  local now = now_ms()
  if not next_slot or next_slot < now - interval then next_slot = now end
  local wait = next_slot - now
  next_slot = next_slot + interval
  return math.max(0, math.floor(wait))
end

function init(args)
  local path, nthreads = args[1], tonumber(args[2])
  interval = tonumber(args[3] or "0")
  if interval > 0 then delay = paced_delay else interval = nil end
  local line_no = 0
  for line in io.lines(path) do
    if math.floor(line_no / BLOCK) % nthreads == tid then
      local ok, target, body = line:match("^([01])\t([^\t]*)\t(.*)$")
      count = count + 1
      requests[count] = wrk.format("POST", target, nil, body)
      expected[count] = ok == "1"
    end
    line_no = line_no + 1
  end
  if count == 0 then error("no requests for thread " .. tid) end
  -- wrk calls request() once on the first thread's state before the run, only to count the requests
  -- of a pipeline; that request is never sent, so it must not take a line of the sequence.
  probe_pending = tid == 0
end

function request()
  if probe_pending then
    probe_pending = false
    return requests[1]
  end
  if next_index > count then
    next_index = 1
    wrapped = 1
  end
  local i = next_index
  next_index = i + 1
  issued = issued + 1
  if not expected[i] then issued_failures = issued_failures + 1 end
  return requests[i]
end

function done(summary, latency, _)
  local issued_total, failures_total, wrapped_any = 0, 0, 0
  for _, thread in ipairs(threads) do
    issued_total = issued_total + thread:get("issued")
    failures_total = failures_total + thread:get("issued_failures")
    wrapped_any = math.max(wrapped_any, thread:get("wrapped"))
  end
  io.write(string.format(
    'BENCH-JSON {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"statusErrors":%d,' ..
    '"socketErrors":%d,"timeouts":%d,"issued":%d,"issuedExpectedFailures":%d,"wrapped":%s}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write, summary.errors.timeout,
    issued_total, failures_total, wrapped_any == 1 and "true" or "false"))
end
