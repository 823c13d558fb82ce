-- wrk script: send pre-built raw HTTP requests (pre-signed bodies) from a file, in order.
-- Usage: wrk -t1 -c8 -d8s -s benchmarks/wrk.lua http://127.0.0.1:8391 -- FILE
-- FILE holds complete requests separated by NUL bytes (benchmarks/bodies.py writes it). Each
-- thread takes every n-th request from its own offset, so no request is sent twice unless the
-- file runs out; then it wraps and `wrapped` in the summary says how often.
local threads = {}
local counter = 0

-- setup() runs in the main Lua state; each thread gets a fresh state of its own, so the
-- thread's offset and the number of threads are handed over with thread:set.
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
  for _, t in ipairs(threads) do
    t:set("nthreads", counter)
  end
end

function init(args)
  local f = assert(io.open(args[1], "rb"))
  local data = f:read("*a")
  f:close()
  requests = {}
  for rec in string.gmatch(data, "([^%z]+)") do
    requests[#requests + 1] = rec
  end
  stride = nthreads
  index = tid
  sent = 0
  wrapped = 0
  bad = 0
end

function request()
  if index >= #requests then
    index = index % #requests
    wrapped = wrapped + 1
  end
  local r = requests[index + 1]
  index = index + stride
  sent = sent + 1
  return r
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    bad = bad + 1
  end
end

function done(summary, latency, reqs)
  local bad_total, wrapped_total = 0, 0
  for _, t in ipairs(threads) do
    bad_total = bad_total + t:get("bad")
    wrapped_total = wrapped_total + t:get("wrapped")
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests": %d, "duration_us": %d, "non2xx": %d, "wrapped": %d, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, ' ..
    '"p50_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f}\n',
    summary.requests, summary.duration, bad_total, wrapped_total,
    e.connect, e.read, e.write, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
