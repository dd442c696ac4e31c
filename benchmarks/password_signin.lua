-- Password sign-in end to end through the native API (docs/native-auth.md, "Sign-in"):
--
--   1. POST /oauth2/v2.0/initiate   client_id, username, challenge_type=password redirect
--   2. POST /oauth2/v2.0/challenge  client_id, continuation_token, challenge_type=password redirect
--                                   -> challenge_type: password
--   3. POST /oauth2/v2.0/token      client_id, continuation_token, grant_type=password, password, scope
--                                   -> access_token (and id_token, refresh_token)
--
-- Each thread (run with -tN -cN: one connection per thread, each thread its own Lua state)
-- runs the three calls in sequence, again and again: wrk asks request() for the next request
-- on a connection only after response() had the previous one, so a thread's steps are
-- strictly sequential and each step can use the token of the one before.
--
-- A sign-in counts when the token call answers 200 with an access_token. Every non-200 is
-- counted (with the first body); a 200 without what the next step needs (no continuation
-- token, a challenge other than password, no access token) is counted as no_token. After
-- either the thread starts a new sign-in at step 1. run.sh fails when either count is not 0.
--
-- wrk's latency is per request, so the sign-in's own duration is measured here: from just
-- before step 1 is written (request()) to step 3's parsed answer (response()), on
-- CLOCK_MONOTONIC read through LuaJIT's FFI (wrk's Lua has no clock of its own; os.clock is
-- CPU time and os.time has one-second resolution). The BENCH line reports sign-ins as its
-- requests, rps and p50/p90/p99/max (nearest rank over every completed sign-in); the
-- per-call figures from wrk's own histogram come as http_requests, http_rps and call_*_ms.
--
-- Environment: BENCH_CLIENT_ID (a first-party client; public, so client_id is all it sends),
-- BENCH_USERNAME, BENCH_PASSWORD, BENCH_SCOPE (default "openid offline_access"),
-- BENCH_INITIATE_PATH, BENCH_CHALLENGE_PATH, BENCH_TOKEN_PATH (default Entra's paths).
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock_id, bench_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("bench_timespec")

-- Milliseconds on the monotonic clock.
local function now_ms()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
   return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

local function required(name)
   return os.getenv(name) or error(name .. " is not set")
end

-- application/x-www-form-urlencoded
local function encode(value)
   return (string.gsub(value, "[^%w%-%._~]", function(c)
      if c == " " then return "+" end
      return string.format("%%%02X", string.byte(c))
   end))
end

local client_id = encode(required("BENCH_CLIENT_ID"))
local username = encode(required("BENCH_USERNAME"))
local password = encode(required("BENCH_PASSWORD"))
local scope = encode(os.getenv("BENCH_SCOPE") or "openid offline_access")
local challenges = encode("password redirect")
local paths = {
   os.getenv("BENCH_INITIATE_PATH") or "/oauth2/v2.0/initiate",
   os.getenv("BENCH_CHALLENGE_PATH") or "/oauth2/v2.0/challenge",
   os.getenv("BENCH_TOKEN_PATH") or "/oauth2/v2.0/token",
}
local threads = {}

function setup(thread)
   threads[#threads + 1] = thread
end

function init(args)
   ok = 0
   non200 = 0
   no_token = 0
   first_error = ""
   durations = {}
   step = 1
   continuation = nil
   started = 0
   headers = {
      ["Content-Type"] = "application/x-www-form-urlencoded",
      ["Accept"] = "application/json",
   }
end

function request()
   local body
   if step == 1 then
      started = now_ms()
      body = "client_id=" .. client_id .. "&username=" .. username .. "&challenge_type=" .. challenges
   elseif step == 2 then
      body = "client_id=" .. client_id .. "&continuation_token=" .. encode(continuation) .. "&challenge_type=" .. challenges
   else
      body = "client_id=" .. client_id .. "&continuation_token=" .. encode(continuation) ..
         "&grant_type=password&password=" .. password .. "&scope=" .. scope
   end
   return wrk.format("POST", paths[step], headers, body)
end

local function fail(counter, message)
   if counter == "non200" then non200 = non200 + 1 else no_token = no_token + 1 end
   if first_error == "" then first_error = "step " .. step .. " (" .. paths[step] .. "): " .. message end
   step = 1
   continuation = nil
end

function response(status, hdrs, body)
   body = body or ""
   if status ~= 200 then
      return fail("non200", status .. " " .. string.sub(body, 1, 300))
   end
   if step == 3 then
      if not string.find(body, '"access_token"%s*:%s*"') then
         return fail("no_token", "200 without access_token: " .. string.sub(body, 1, 300))
      end
      ok = ok + 1
      durations[#durations + 1] = now_ms() - started
      step = 1
      continuation = nil
      return
   end
   if step == 2 and not string.find(body, '"challenge_type"%s*:%s*"password"') then
      return fail("no_token", "200 without challenge_type password: " .. string.sub(body, 1, 300))
   end
   continuation = string.match(body, '"continuation_token"%s*:%s*"([^"]+)"')
   if not continuation then
      return fail("no_token", "200 without continuation_token: " .. string.sub(body, 1, 300))
   end
   step = step + 1
end

-- Nearest-rank percentile of a sorted list.
local function percentile(sorted, p)
   if #sorted == 0 then return 0 end
   return sorted[math.max(1, math.ceil(p / 100 * #sorted))]
end

function done(summary, latency, requests)
   local all = {}
   local total = { non200 = 0, no_token = 0, first_error = "" }
   for _, thread in ipairs(threads) do
      for _, d in ipairs(thread:get("durations") or {}) do all[#all + 1] = d end
      total.non200 = total.non200 + (thread:get("non200") or 0)
      total.no_token = total.no_token + (thread:get("no_token") or 0)
      local first = thread:get("first_error") or ""
      if total.first_error == "" and first ~= "" then total.first_error = first end
   end
   table.sort(all)
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "BENCH requests=%d duration_s=%.3f rps=%.2f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f " ..
      "status_errors=%d connect_errors=%d read_errors=%d write_errors=%d timeouts=%d non200=%d no_token=%d " ..
      "http_requests=%d http_rps=%.1f call_p50_ms=%.3f call_p99_ms=%.3f call_max_ms=%.3f\n",
      #all, seconds, #all / seconds,
      percentile(all, 50), percentile(all, 90), percentile(all, 99), all[#all] or 0,
      e.status, e.connect, e.read, e.write, e.timeout, total.non200, total.no_token,
      summary.requests, summary.requests / seconds,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
   if total.first_error ~= "" then
      io.write("BENCH_FIRST_ERROR " .. total.first_error .. "\n")
   end
end
