-- Shared by the wrk scripts: prints one machine-readable line that run.sh parses.
-- Latencies from wrk are in microseconds; printed in milliseconds.
function bench_report(summary, latency, extra)
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "BENCH requests=%d duration_s=%.3f rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f " ..
      "status_errors=%d connect_errors=%d read_errors=%d write_errors=%d timeouts=%d non200=%d no_token=%d\n",
      summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
      latency.max / 1000, e.status, e.connect, e.read, e.write, e.timeout,
      extra.non200 or -1, extra.no_token or 0))
   if extra.first_error and extra.first_error ~= "" then
      io.write("BENCH_FIRST_ERROR " .. extra.first_error .. "\n")
   end
end
