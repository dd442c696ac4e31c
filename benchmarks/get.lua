-- GET load (discovery, JWKS). No request()/response() callbacks, so wrk keeps its
-- fast path; non-2xx answers are counted by wrk itself (status_errors, and its
-- "Non-2xx or 3xx responses" line, which run.sh also reads).
dofile(os.getenv("BENCH_DIR") .. "/report.lua")

function done(summary, latency, requests)
   bench_report(summary, latency, {})
end
