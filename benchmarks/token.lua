-- POST load on the token endpoint.
--
-- BENCH_GRANT=client_credentials: every request is
--   grant_type=client_credentials&scope=api  with HTTP Basic auth.
--   The request never changes, so the script defines neither request() nor response():
--   wrk formats it once and reads no answer's headers or body (its fast path, as in
--   get.lua; its SCRIPTING notes say both callbacks are expensive). Answers above 399
--   are counted by wrk itself (status_errors, and the "Non-2xx or 3xx responses" line
--   run.sh reads). The load generator shares the machine with the server, so the
--   CPU it doesn't spend is the server's.
-- BENCH_GRANT=refresh_token: refresh tokens rotate on every use, and presenting a used
--   one revokes the whole family, so each thread (run with -tN -cN: one connection per
--   thread, and each thread has its own Lua state) keeps its own chain: setup() gives it
--   a starting token from BENCH_TOKENS_FILE (line BENCH_TOKENS_OFFSET + thread number),
--   and response() takes the new refresh_token from each answer for the next request.
--   wrk asks request() for the next request only after the previous response on that
--   connection, so a chain is strictly sequential. The request's fixed part is formatted
--   once; each request appends its length and body.
--
-- Every non-200 answer is counted; a refresh thread whose chain breaks stops at once
-- (otherwise it would flood the server with cheap invalid_grant answers). run.sh fails
-- when the count is not zero.
dofile(os.getenv("BENCH_DIR") .. "/report.lua")

local grant = os.getenv("BENCH_GRANT") or error("BENCH_GRANT is not set")
local basic = os.getenv("BENCH_BASIC") or error("BENCH_BASIC is not set")
local threads = {}
local tokens = nil

wrk.method = "POST"
wrk.headers["Authorization"] = "Basic " .. basic
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Accept"] = "application/json"

local function load_tokens()
   local list = {}
   for line in io.lines(os.getenv("BENCH_TOKENS_FILE")) do
      if #line > 0 then list[#list + 1] = line end
   end
   return list
end

function setup(thread)
   local index = #threads + 1
   if grant == "refresh_token" then
      tokens = tokens or load_tokens()
      local line = tonumber(os.getenv("BENCH_TOKENS_OFFSET") or "0") + index
      local token = tokens[line] or error("no refresh token on line " .. line .. " of BENCH_TOKENS_FILE")
      thread:set("refresh", token)
   end
   threads[index] = thread
end

if grant == "client_credentials" then
   wrk.body = "grant_type=client_credentials&scope=api"
elseif grant == "refresh_token" then
   local head = nil

   function init(args)
      non200 = 0
      no_token = 0
      first_error = ""
   end

   function request()
      if not head then
         -- The request line and headers, without a body: it ends with an empty line,
         -- whose CRLF is dropped here and written after Content-Length.
         local whole = wrk.format()
         head = string.sub(whole, 1, #whole - 2)
      end
      local body = "grant_type=refresh_token&refresh_token=" .. refresh
      return head .. "Content-Length: " .. #body .. "\r\n\r\n" .. body
   end

   function response(status, hdrs, body)
      if status ~= 200 then
         non200 = non200 + 1
         if first_error == "" then first_error = status .. " " .. string.sub(body or "", 1, 300) end
         wrk.thread:stop()
         return
      end
      local token = string.match(body, '"refresh_token"%s*:%s*"([^"]+)"')
      if token then
         refresh = token
      else
         no_token = no_token + 1
         if first_error == "" then first_error = "200 without refresh_token: " .. string.sub(body, 1, 300) end
         wrk.thread:stop()
      end
   end
else
   error("BENCH_GRANT must be client_credentials or refresh_token, not " .. grant)
end

function done(summary, latency, requests)
   if grant == "client_credentials" then
      bench_report(summary, latency, {})
      return
   end
   local total = { non200 = 0, no_token = 0, first_error = "" }
   for _, thread in ipairs(threads) do
      total.non200 = total.non200 + (thread:get("non200") or 0)
      total.no_token = total.no_token + (thread:get("no_token") or 0)
      local first = thread:get("first_error") or ""
      if total.first_error == "" and first ~= "" then total.first_error = first end
   end
   bench_report(summary, latency, total)
end
