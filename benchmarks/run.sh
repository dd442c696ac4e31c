#!/usr/bin/env bash
# Tessera load benchmark: see docs/performance.md.
#
#   bash benchmarks/run.sh              build (release), measure, print the table
#   bash benchmarks/run.sh --profile    also profile the two token loads with perf
#   bash benchmarks/run.sh --no-build   use the release binary already built
#   bash benchmarks/run.sh --no-postgres  skip the PostgreSQL runs (one node, two nodes behind HAProxy)
#   bash benchmarks/run.sh --no-glewlwyd  skip the peer (glewlwyd from Debian, benchmarks/glewlwyd.sh)
#   bash benchmarks/run.sh --no-large  skip the large database (1 M users, 10 M grants: generating it takes minutes)
#
# Settings (environment):
#   BENCH_DURATION=20        seconds of each measured load
#   BENCH_WARMUP=3           seconds of warm-up before each measured load
#   BENCH_TOKEN_CONNECTIONS=4  connections (= wrk threads) of the two token loads
#   BENCH_GET_THREADS=1 BENCH_GET_CONNECTIONS=64   wrk shape of the discovery and JWKS loads (also run at 8)
#   BENCH_BIN=PATH           measure this tessera binary (a release build) instead of building one
#   BENCH_PROFILE_SECONDS=10 length of each profiled load (--profile)
#   BENCH_OUT=DIR            where the wrk outputs, server log and profiles go (default: a new /tmp dir)
#   BENCH_LARGE_USERS=1000000 BENCH_LARGE_GRANTS=10000000 BENCH_LARGE_EXPIRED_SHARE=0.2   the large database
#   BENCH_READY_USERS=100000 BENCH_READY_GRANTS=1000000   the database the ready time is held to (< 100 ms)
#   BENCH_PURGE_LOAD_SECONDS=60  length of the refresh load the purge runs in; BENCH_PURGE_TIMEOUT=600 (s) how
#                            long a request may wait during it (a stall shows in the latency, not as an error)
#
# Exit status: 0 when every load got only 200s, 1 when any load got another answer
# (a broken refresh chain shows up here), 2 when setup failed. Missing a target is
# reported in the table but is not a failure.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_DIR="$ROOT/benchmarks"
export BENCH_DIR

DURATION=${BENCH_DURATION:-20}
WARMUP=${BENCH_WARMUP:-3}
TOKEN_CONNECTIONS=${BENCH_TOKEN_CONNECTIONS:-4}
GET_THREADS=${BENCH_GET_THREADS:-1}
GET_CONNECTIONS=${BENCH_GET_CONNECTIONS:-64}
PROFILE_SECONDS=${BENCH_PROFILE_SECONDS:-10}
PROFILE=0
BUILD=1
POSTGRES=1
GLEWLWYD=1
LARGE=1
LARGE_USERS=${BENCH_LARGE_USERS:-1000000}
LARGE_GRANTS=${BENCH_LARGE_GRANTS:-10000000}
LARGE_EXPIRED_SHARE=${BENCH_LARGE_EXPIRED_SHARE:-0.2}
READY_USERS=${BENCH_READY_USERS:-100000}
READY_GRANTS=${BENCH_READY_GRANTS:-1000000}
PURGE_LOAD_SECONDS=${BENCH_PURGE_LOAD_SECONDS:-60}
PURGE_TIMEOUT=${BENCH_PURGE_TIMEOUT:-600}
for arg in "$@"; do
    case "$arg" in
        --profile) PROFILE=1 ;;
        --no-build) BUILD=0 ;;
        --no-postgres) POSTGRES=0 ;;
        --no-glewlwyd) GLEWLWYD=0 ;;
        --no-large) LARGE=0 ;;
        -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "run.sh: unknown argument $arg" >&2; exit 2 ;;
    esac
done

say() { printf '\n== %s\n' "$*"; }
die() { printf '\nrun.sh: FAILED: %s\n' "$*" >&2; exit 2; }

# ---------------------------------------------------------------------------
# 1. Tools and the release binary
# ---------------------------------------------------------------------------
need_packages=()
command -v wrk >/dev/null || need_packages+=(wrk)
command -v openssl >/dev/null || need_packages+=(openssl)
command -v curl >/dev/null || need_packages+=(curl)
command -v python3 >/dev/null || need_packages+=(python3)
if [ "$PROFILE" = 1 ] && ! command -v perf >/dev/null; then need_packages+=(linux-perf); fi
if [ "$POSTGRES" = 1 ] && ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then need_packages+=(haproxy); fi
if [ ${#need_packages[@]} -gt 0 ]; then
    say "installing ${need_packages[*]} (Debian)"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_packages[@]}" >/dev/null
fi

SCRATCH="$ROOT/.build-release"
mkdir -p "$SCRATCH"
if [ -n "${BENCH_BIN:-}" ]; then BUILD=0; fi
if [ "$BUILD" = 1 ]; then
    say "building the release binary (scripts/build-release --scratch-path .build-release)"
    build_start=$(date +%s)
    if ! (cd "$ROOT" && bash scripts/build-release --scratch-path "$SCRATCH" >"$ROOT/.build-release/bench-build.log" 2>&1); then
        tail -n 20 "$ROOT/.build-release/bench-build.log" >&2
        die "the release build failed (full log: .build-release/bench-build.log)"
    fi
    tail -n 1 "$ROOT/.build-release/bench-build.log"
    echo "build took $(( $(date +%s) - build_start )) s"
fi
if [ -n "${BENCH_BIN:-}" ]; then
    BIN=$(cd "$(dirname "$BENCH_BIN")" && pwd)/$(basename "$BENCH_BIN")
else
    BIN="$(cd "$ROOT" && swift build --package-path Server -c release --scratch-path "$SCRATCH" --show-bin-path)/tessera"
fi
[ -x "$BIN" ] || die "no release binary at $BIN (run without --no-build)"

OUT=${BENCH_OUT:-$(mktemp -d /tmp/tessera-bench.XXXXXX)}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/tessera-bench-db.XXXXXX)
DB="$WORK/tessera.sqlite"
SERVER_PID=""

stop_server() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}
EXTRA_PIDS=()
cleanup() {
    stop_server
    for pid in "${EXTRA_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${EXTRA_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    if declare -F stop_test_postgres >/dev/null; then
        # PostgreSQL's own log (its checkpoints among it) goes with the cluster's folder: kept with the outputs.
        [ -f "${PG_TEST_DIR:-}/server.log" ] && cp "$PG_TEST_DIR/server.log" "$OUT/postgres-server.log"
        stop_test_postgres
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
echo "cpu: $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)   (anything well above 0 means another job shares the 2 cores)"
echo "outputs: $OUT"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    echo "source: commit $(git -C "$ROOT" rev-parse --short HEAD), $(git -C "$ROOT" status --porcelain -- Sources Package.swift Server/Sources Server/Package.swift | wc -l) uncommitted changes under the two packages' sources and manifests; binary built $(date -u -r "$BIN" +%Y-%m-%dT%H:%MZ)"
fi

# ---------------------------------------------------------------------------
# 2. The reference: OpenSSL's RSA-2048 signing rate on one and on two cores
# ---------------------------------------------------------------------------
say "openssl speed rsa2048 (reference, measured now)"
rsa_sign_rate() { awk '/^rsa 2048 bits/ {rate=$6} END {print rate}'; }
openssl speed -seconds 3 rsa2048 >"$OUT/openssl-1core.txt" 2>/dev/null
openssl speed -seconds 3 -multi 2 rsa2048 >"$OUT/openssl-2core.txt" 2>/dev/null
OPENSSL_1=$(rsa_sign_rate <"$OUT/openssl-1core.txt")
OPENSSL_2=$(rsa_sign_rate <"$OUT/openssl-2core.txt")
[ -n "$OPENSSL_1" ] && [ -n "$OPENSSL_2" ] || die "could not read the RSA 2048 sign/s figures from openssl speed"
echo "$(openssl version): RSA-2048 sign/s  one core $OPENSSL_1   two cores $OPENSSL_2"
REF_NOTE=""
if awk -v a="$OPENSSL_1" -v b="$OPENSSL_2" 'BEGIN { exit !(b < 1.7 * a) }'; then
    REF_NOTE=" (reference disturbed)"
    echo "WARNING: the two-core rate is less than 1.7 x the one-core rate: something else is using the cores," \
        "so the reference (and the ratios below) are off; run again on a quiet machine."
fi
# OpenSSL 3 signs RSA-2048 with AVX-512 IFMA code where the CPU has it; BoringSSL (swift-crypto) has no
# such code path. The server signs through OpenSSL only there (docs/configuration.md, "RSA signatures
# through OpenSSL"). The rate without it shows what the same arithmetic costs here.
OPENSSL_1_NOIFMA=""
if grep -qw avx512ifma /proc/cpuinfo; then
    OPENSSL_ia32cap=":~0x200000" openssl speed -seconds 3 rsa2048 >"$OUT/openssl-1core-no-ifma.txt" 2>/dev/null
    OPENSSL_1_NOIFMA=$(rsa_sign_rate <"$OUT/openssl-1core-no-ifma.txt")
    echo "this CPU has AVX-512 IFMA; openssl with it masked off (OPENSSL_ia32cap=:~0x200000): one core $OPENSSL_1_NOIFMA sign/s"
fi

# ---------------------------------------------------------------------------
# 3. Start the server: ready time and idle memory
# ---------------------------------------------------------------------------
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ISSUER="http://127.0.0.1:$PORT"

now_ns() { date +%s%N; }

# Starts `tessera serve` and sets SERVER_PID and READY_MS: milliseconds from the fork
# until /health first answers 200 (polled with curl as fast as it goes, ~ every 5 ms).
start_server() {
    local log="$1"
    local start_ns; start_ns=$(now_ns)
    "$BIN" serve --host 127.0.0.1 --port "$PORT" --database "$DB" >>"$log" 2>&1 &
    SERVER_PID=$!
    local deadline=$(( start_ns + 30000000000 ))
    while :; do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$ISSUER/health" || true)" = 200 ]; then break; fi
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$log" >&2; die "tessera serve exited during start"; }
        [ "$(now_ns)" -lt "$deadline" ] || die "tessera serve did not answer /health within 30 s"
    done
    READY_MS=$(( ($(now_ns) - start_ns) / 1000000 ))
}
rss_kb() { awk "/^$2:/ {print \$2}" "/proc/$1/status"; }

say "starting tessera serve on an empty database (migrations + RSA key generation)"
start_server "$OUT/server.log"
READY_FIRST_MS=$READY_MS
echo "first start, empty database: /health 200 after $READY_FIRST_MS ms"

say "registering the benchmark clients and user with the CLI (server running, same SQLite file)"
CC_SECRET="bench-client-credentials-secret-0123456789"
APP_SECRET="bench-app-secret-0123456789-abcdefghijklmnop"
REDIRECT="http://127.0.0.1:9/cb"
CC_JSON=$("$BIN" clients add --database "$DB" --name bench --secret "$CC_SECRET" \
    --grant-type client_credentials --scope api --json) || die "tessera clients add (client_credentials client) failed"
CC_ID=$(printf '%s' "$CC_JSON" | python3 -c 'import json, sys; print(json.load(sys.stdin)["client_id"])')
"$BIN" clients add --database "$DB" --name app --id app --secret "$APP_SECRET" --redirect-uri "$REDIRECT" \
    --first-party --scope openid --scope offline_access \
    --grant-type authorization_code --grant-type refresh_token --json >/dev/null || die "tessera clients add (app) failed"
printf 'bench-Passw0rd-7q\n' | "$BIN" users add bench@example.com --database "$DB" --password-stdin >/dev/null \
    || die "tessera users add failed"
echo "client_credentials client: $CC_ID; user-flow client: app; user: bench@example.com"

stop_server
# Three starts, the median held to the target (one start's time wanders with the machine's
# spells); the third server stays up for the rest.
say "restarting tessera serve on the populated database (three starts)"
READY_RUNS=()
for run in 1 2 3; do
    [ "$run" = 1 ] || stop_server
    start_server "$OUT/server.log"
    READY_RUNS+=("$READY_MS")
done
READY_MS_SECOND=$(printf '%s
' "${READY_RUNS[@]}" | sort -n | sed -n 2p)
sleep 1
IDLE_RSS_KB=$(rss_kb "$SERVER_PID" VmRSS)
IDLE_HWM_KB=$(rss_kb "$SERVER_PID" VmHWM)
echo "populated database: /health 200 after ${READY_RUNS[*]} ms, median $READY_MS_SECOND ms; 1 s after the third: idle VmRSS $(( IDLE_RSS_KB / 1024 )) MiB, peak so far (VmHWM) $(( IDLE_HWM_KB / 1024 )) MiB (pid $SERVER_PID)"

# ---------------------------------------------------------------------------
# 4. Endpoints from discovery, and refresh tokens through the real flow
# ---------------------------------------------------------------------------
DISCOVERY_URL="$ISSUER/.well-known/openid-configuration"
curl -sf "$DISCOVERY_URL" >"$OUT/discovery.json" || die "discovery did not answer"
read -r TOKEN_URL JWKS_URL < <(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(m["token_endpoint"], m["jwks_uri"])' "$OUT/discovery.json")
echo "token endpoint $TOKEN_URL; jwks_uri $JWKS_URL"
curl -sf "$JWKS_URL" | python3 -c 'import json, sys; keys = json.load(sys.stdin)["keys"]; print("JWKS:", len(keys), "keys,", " ".join(k["alg"] for k in keys))'
SIGNER=$(sed -n 's/^Tessera is ready: .*, signing \(.*\)$/\1/p' "$OUT/server.log" | tail -n 1)
echo "tokens signed with: ${SIGNER:-unknown (no start-up line)}"

# Chains: one per connection for the warm-up, the measured run and (with --profile) the profiled run.
CHAINS=$(( TOKEN_CONNECTIONS * (2 + PROFILE) ))
say "obtaining $CHAINS refresh tokens through /authorize, /login and the code exchange"
TOKENS_FILE="$WORK/refresh-tokens.txt"
flow_start=$(now_ns)
python3 "$BENCH_DIR/refresh_tokens.py" "$ISSUER" app "$APP_SECRET" "$REDIRECT" bench@example.com bench-Passw0rd-7q "$CHAINS" \
    >"$TOKENS_FILE" || die "could not obtain refresh tokens through the authorization code flow"
[ "$(wc -l <"$TOKENS_FILE")" -eq "$CHAINS" ] || die "expected $CHAINS refresh tokens"
echo "got $CHAINS refresh tokens in $(( ($(now_ns) - flow_start) / 1000000 )) ms (one password login, then the session cookie)"

CC_BASIC=$(printf '%s:%s' "$CC_ID" "$CC_SECRET" | base64 -w0)
APP_BASIC=$(printf '%s:%s' app "$APP_SECRET" | base64 -w0)
# Sanity: one client_credentials request by hand.
curl -sf -u "$CC_ID:$CC_SECRET" -d 'grant_type=client_credentials&scope=api' "$TOKEN_URL" >/dev/null \
    || die "a client_credentials request by curl failed"

# ---------------------------------------------------------------------------
# 5. Loads
# ---------------------------------------------------------------------------
# run_wrk NAME THREADS CONNECTIONS SECONDS SCRIPT URL [ENV=VALUE...]: output in $OUT/NAME.txt
run_wrk() {
    local name=$1 threads=$2 connections=$3 seconds=$4 script=$5 url=$6
    shift 6
    local ticks_before ticks_after busy_before busy_after status=0
    ticks_before=$(cpu_ticks)
    busy_before=$(machine_busy_ticks)
    # bash's time keyword: user and system CPU seconds of wrk itself, in $OUT/NAME.time
    { TIMEFORMAT='%U %S'; time env "$@" wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout "${WRK_TIMEOUT:-10}s" --latency \
        -s "$BENCH_DIR/$script" "$url" >"$OUT/$name.txt" 2>&1; } 2>"$OUT/$name.time" || status=$?
    for pid in "${SERVER_PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$OUT/server.log" >&2; die "a server died during $name"; }
    done
    ticks_after=$(cpu_ticks)
    busy_after=$(machine_busy_ticks)
    [ "$status" = 0 ] || { cat "$OUT/$name.txt" >&2; die "wrk failed for $name"; }
    echo "$(( ticks_after - ticks_before ))" >"$OUT/$name.server-ticks"
    echo "$(( busy_after - busy_before ))" >"$OUT/$name.machine-ticks"
}
CLK_TCK=$(getconf CLK_TCK)
# user + system CPU of the server processes (SERVER_PIDS) so far, in clock ticks (/proc/PID/stat fields 14 and 15)
cpu_ticks() { local pid total=0; for pid in "${SERVER_PIDS[@]}"; do total=$(( total + $(awk '{print $14 + $15}' "/proc/$pid/stat") )); done; echo "$total"; }
# server_cpu NAME: "cores ms_per_request" of the server during that load
server_cpu() {
    awk -v t="$(cat "$OUT/$1.server-ticks")" -v hz="$CLK_TCK" -v d="$(field "$1" duration_s)" -v n="$(field "$1" requests)" \
        'BEGIN { s = t / hz; printf "%.2f %.3f\n", s / d, (n > 0 ? 1000 * s / n : 0) }'
}
# wrk_cpu NAME: cores used by wrk itself during that load
wrk_cpu() { awk -v d="$(field "$1" duration_s)" '{ printf "%.2f", ($1 + $2) / d }' "$OUT/$1.time"; }
# busy CPU ticks of the whole machine (user nice system irq softirq steal, /proc/stat)
machine_busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
# other_cpu NAME: cores used by everything but the server and wrk during that load (another job, the kernel's
# own threads); well above 0.05 means the figures of that load are disturbed
other_cpu() {
    awk -v m="$(cat "$OUT/$1.machine-ticks")" -v t="$(cat "$OUT/$1.server-ticks")" -v hz="$CLK_TCK" \
        -v d="$(field "$1" duration_s)" -v w="$(awk '{print $1 + $2}' "$OUT/$1.time")" \
        'BEGIN { o = (m - t) / hz - w; if (o < 0) o = 0; printf "%.2f", o / d }'
}
# field NAME KEY: a value from the BENCH line of a wrk output
field() { sed -n 's/^BENCH .*\b'"$2"'=\([^ ]*\).*/\1/p' "$OUT/$1.txt"; }
non2xx() { awk '/Non-2xx or 3xx responses:/ {n=$NF} END {print n+0}' "$OUT/$1.txt"; }

LOADS=(discovery jwks discovery8 jwks8 client_credentials client_credentials8 refresh_token)
declare -A LOAD_SHAPE
load() {
    local name=$1
    case "$name" in
        discovery) set -- "$GET_THREADS" "$GET_CONNECTIONS" get.lua "$DISCOVERY_URL" ;;
        jwks) set -- "$GET_THREADS" "$GET_CONNECTIONS" get.lua "$JWKS_URL" ;;
        discovery8) set -- 1 8 get.lua "$DISCOVERY_URL" ;;
        jwks8) set -- 1 8 get.lua "$JWKS_URL" ;;
        client_credentials)
            set -- "$TOKEN_CONNECTIONS" "$TOKEN_CONNECTIONS" token.lua "$TOKEN_URL" BENCH_GRANT=client_credentials "BENCH_BASIC=$CC_BASIC" ;;
        client_credentials8)
            set -- 2 8 token.lua "$TOKEN_URL" BENCH_GRANT=client_credentials "BENCH_BASIC=$CC_BASIC" ;;
        refresh_token)
            set -- "$TOKEN_CONNECTIONS" "$TOKEN_CONNECTIONS" token.lua "$TOKEN_URL" BENCH_GRANT=refresh_token "BENCH_BASIC=$APP_BASIC" \
                "BENCH_TOKENS_FILE=$TOKENS_FILE" "BENCH_TOKENS_OFFSET=$(( TOKEN_CONNECTIONS * CHAIN_SET ))" ;;
    esac
    LOAD_SHAPE[$name]="-t$1 -c$2"
    local threads=$1 connections=$2 script=$3 url=$4
    shift 4
    run_wrk "$name$SUFFIX" "$threads" "$connections" "$SECONDS_NOW" "$script" "$url" "$@"
}

FAILED=()
DISTURBED=()
SERVER_PIDS=("$SERVER_PID")
# bad_answers NAME: the load's answers other than 200, each counted once: where the script reads
# the answers, its count (non200, every status but 200) and its 200s without a token; where it
# doesn't (non200 -1), wrk's own count of answers above 399 (its "Non-2xx or 3xx responses" line
# and the script's status_errors are that one count); "unknown" when wrk printed no report
bad_answers() {
    local name=$1 n200 errors line
    [ -n "$(field "$name" requests)" ] || { echo unknown; return; }
    n200=$(field "$name" non200)
    if [ -n "$n200" ] && [ "$n200" != -1 ]; then
        echo $(( n200 + $(field "$name" no_token) ))
        return
    fi
    errors=$(field "$name" status_errors)
    line=$(non2xx "$name")
    echo $(( ${errors:-0} > line ? ${errors:-0} : line ))
}
# check_load NAME: adds NAME's failures (non-200 answers, socket errors) to FAILED
check_load() {
    local name=$1 bad sock
    bad=$(bad_answers "$name")
    [ "$bad" != unknown ] || { FAILED+=("$name: wrk printed no report (see $OUT/$name.txt)"); return; }
    sock=$(( $(field "$name" connect_errors) + $(field "$name" read_errors) + $(field "$name" write_errors) + $(field "$name" timeouts) ))
    [ "$bad" = 0 ] || FAILED+=("$name: $bad non-200 answers ($(sed -n 's/^BENCH_FIRST_ERROR //p' "$OUT/$name.txt" | head -c 300))")
    [ "$sock" = 0 ] || FAILED+=("$name: $sock socket errors or timeouts")
}
for name in "${LOADS[@]}"; do
    say "load: $name"
    CHAIN_SET=0 SUFFIX=-warmup SECONDS_NOW=$WARMUP load "$name"
    [ "$(bad_answers "$name-warmup")" = 0 ] || FAILED+=("$name (warm-up): $(bad_answers "$name-warmup") non-200 answers")
    CHAIN_SET=1 SUFFIX="" SECONDS_NOW=$DURATION load "$name"
    grep -E '^BENCH' "$OUT/$name.txt" | sed 's/^/  /'
    check_load "$name"
done

RSS_AFTER_KB=$(rss_kb "$SERVER_PID" VmRSS)
HWM_KB=$(rss_kb "$SERVER_PID" VmHWM)

# ---------------------------------------------------------------------------
# 5b. Password sign-in end to end through the native API (issue 30), against one hash's time
# ---------------------------------------------------------------------------
# Three calls per sign-in (initiate, challenge, token with grant_type=password) by a public
# first-party client, as a phone app signs in: benchmarks/password_signin.lua. Its server is a
# node of its own on the same SQLite file, with the sign-in throttles raised: every sign-in
# starts a flow and all of wrk's connections come from 127.0.0.1, whose default share is 60
# flows a minute (flows-per-address; flows-per-client 6000), and each attempt counts as a wrong
# password until its hash matched (login-failures-*: 5 per account and address, 20 per
# address, 100 per account), which four connections on one account come close to. The main
# server is left as it is, idle, and is not part of this load's CPU figures.
SIGNIN_CONNECTIONS=4
SIGNIN_CORES=$(nproc)
say "load: password_signin (native API: initiate, challenge, token; -t$SIGNIN_CONNECTIONS -c$SIGNIN_CONNECTIONS)"
"$BIN" clients add --database "$DB" --name bench-native --id bench-native --public --first-party \
    --redirect-uri com.example.bench:/cb --scope openid --scope offline_access --json >/dev/null \
    || die "tessera clients add (the public first-party client bench-native) failed"
# The reference: the user's stored hash's scrypt parameters (the CLI hashed with the server's
# defaults) run by OpenSSL through Python's hashlib on one core, 5 times; the median CPU time.
python3 "$BENCH_DIR/scrypt_reference.py" "$DB" bench@example.com 5 >"$OUT/scrypt-reference.txt" \
    || die "the scrypt reference (benchmarks/scrypt_reference.py) failed"
scrypt_field() { sed -n 's/^SCRYPT .*\b'"$1"'=\([^ ]*\).*/\1/p' "$OUT/scrypt-reference.txt"; }
HASH_MS=$(scrypt_field cpu_ms)
HASH_WALL_MS=$(scrypt_field wall_ms)
SIGNIN_TARGET_RPS=$(awk -v c="$SIGNIN_CORES" -v h="$HASH_MS" 'BEGIN { printf "%.2f", 0.8 * c / (h / 1000) }')
SIGNIN_P99_TARGET_MS=$(awk -v h="$HASH_MS" 'BEGIN { printf "%.1f", 3 * h }')
echo "reference: scrypt N=2^$(scrypt_field ln) r=$(scrypt_field r) p=$(scrypt_field p) (the stored hash's: the server's defaults)," \
    "OpenSSL through Python's hashlib, one core: median of 5 $HASH_MS ms CPU ($HASH_WALL_MS ms wall; runs: $(scrypt_field cpu_all_ms) ms)"
echo "targets: >= 0.8 x $SIGNIN_CORES / hash = $SIGNIN_TARGET_RPS sign-ins/s; p99 < 3 x hash = $SIGNIN_P99_TARGET_MS ms"
SCRYPT_NOTE=""
if awk -v w="$HASH_WALL_MS" -v c="$HASH_MS" 'BEGIN { exit !(w > 1.15 * c) }'; then
    SCRYPT_NOTE=" (hash reference disturbed)"
    echo "WARNING: the hash's wall time is more than 1.15 x its CPU time: something else is using the cores."
fi
read -r SIGNIN_INITIATE SIGNIN_CHALLENGE SIGNIN_TOKEN < <(python3 -c '
import json, sys, urllib.parse
e = json.load(open(sys.argv[1]))["native_authentication_endpoints"]
print(*(urllib.parse.urlparse(e[name]).path for name in ("signin_initiate", "signin_challenge", "token")))' "$OUT/discovery.json") \
    || die "discovery has no native_authentication_endpoints"
SIGNIN_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN" serve --host 127.0.0.1 --port "$SIGNIN_PORT" --database "$DB" \
    --flows-per-address 1000000 --flows-per-client 1000000 --login-failures-per-account 1000000 \
    --login-failures-per-address 1000000 --login-failures-per-account-total 1000000 >>"$OUT/server-signin.log" 2>&1 &
SIGNIN_PID=$!
EXTRA_PIDS+=("$SIGNIN_PID")
signin_deadline=$(( $(date +%s) + 30 ))
until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$SIGNIN_PORT/health" || true)" = 200 ]; do
    kill -0 "$SIGNIN_PID" 2>/dev/null || { cat "$OUT/server-signin.log" >&2; die "the sign-in node (tessera serve) exited during start"; }
    [ "$(date +%s)" -lt "$signin_deadline" ] || die "the sign-in node did not answer /health within 30 s"
    sleep 0.05
done
SIGNIN_ENV=(BENCH_CLIENT_ID=bench-native BENCH_USERNAME=bench@example.com BENCH_PASSWORD=bench-Passw0rd-7q
    "BENCH_SCOPE=openid offline_access" "BENCH_INITIATE_PATH=$SIGNIN_INITIATE" "BENCH_CHALLENGE_PATH=$SIGNIN_CHALLENGE"
    "BENCH_TOKEN_PATH=$SIGNIN_TOKEN")
MAIN_SERVER_PIDS=("${SERVER_PIDS[@]}")
SERVER_PIDS=("$SIGNIN_PID")
run_wrk password_signin-warmup "$SIGNIN_CONNECTIONS" "$SIGNIN_CONNECTIONS" "$WARMUP" password_signin.lua \
    "http://127.0.0.1:$SIGNIN_PORT/" "${SIGNIN_ENV[@]}"
warm_bad=$(( $(field password_signin-warmup non200) + $(field password_signin-warmup no_token) ))
[ "$warm_bad" = 0 ] || FAILED+=("password_signin (warm-up): $warm_bad failed steps ($(sed -n 's/^BENCH_FIRST_ERROR //p' \
    "$OUT/password_signin-warmup.txt" | head -c 300))")
# The warm-up's last sign-ins go on hashing after wrk has gone: wait until the node is idle (at
# most 1 tick of CPU in 0.2 s; 30 s at most), so that the measured run starts on empty threads.
for _ in $(seq 1 150); do
    signin_ticks=$(cpu_ticks); sleep 0.2
    [ $(( $(cpu_ticks) - signin_ticks )) -gt 1 ] || break
done
run_wrk password_signin "$SIGNIN_CONNECTIONS" "$SIGNIN_CONNECTIONS" "$DURATION" password_signin.lua \
    "http://127.0.0.1:$SIGNIN_PORT/" "${SIGNIN_ENV[@]}"
LOAD_SHAPE[password_signin]="-t$SIGNIN_CONNECTIONS -c$SIGNIN_CONNECTIONS"
grep -E '^BENCH' "$OUT/password_signin.txt" | sed 's/^/  /'
echo "  (requests, rps and p50-max: whole sign-ins, three calls each; http_* and call_*: wrk's per-call figures)"
check_load password_signin
LOADS+=(password_signin)
SERVER_PIDS=("${MAIN_SERVER_PIDS[@]}")
kill -TERM "$SIGNIN_PID" 2>/dev/null || true
wait "$SIGNIN_PID" 2>/dev/null || true

# ---------------------------------------------------------------------------
# 6. Optional: where the time goes (perf, on separate loads so it does not skew the table)
# ---------------------------------------------------------------------------
if [ "$PROFILE" = 1 ]; then
    for name in client_credentials refresh_token; do
        say "profiling $name for $PROFILE_SECONDS s (perf record -g -p $SERVER_PID)"
        perf record -F 997 -g -p "$SERVER_PID" -o "$OUT/perf-$name.data" -- sleep "$(( PROFILE_SECONDS + 1 ))" \
            >"$OUT/perf-$name.record.log" 2>&1 &
        perf_pid=$!
        sleep 0.5
        CHAIN_SET=2 SUFFIX=-profiled SECONDS_NOW=$PROFILE_SECONDS load "$name"
        wait "$perf_pid" || echo "perf record exited with $? (see $OUT/perf-$name.record.log)"
        [ "$(bad_answers "$name-profiled")" = 0 ] || FAILED+=("$name (profiled): $(bad_answers "$name-profiled") non-200 answers")
        if [ -s "$OUT/perf-$name.data" ]; then
            perf script -i "$OUT/perf-$name.data" 2>/dev/null | swift demangle --simplified >"$OUT/perf-$name.script.txt"
            python3 "$BENCH_DIR/perf_summary.py" "$OUT/perf-$name.script.txt" | tee "$OUT/perf-$name.summary.txt"
        fi
    done
fi

# ---------------------------------------------------------------------------
# 6a. The large database (issue 30): ready on 100k users; the token loads again on 1 M users
#     and 10 M grants (benchmarks/generate_database.py); the hourly purge during the refresh load
# ---------------------------------------------------------------------------
LARGE_LOADS=()
if [ "$LARGE" = 1 ]; then
    stop_server
    MAIN_DB=$DB
    # large_copy NAME: a copy of the benchmark database (its clients, user and signing keys) with its master key
    large_copy() {
        local copy="$WORK/$1.sqlite" suffix
        for suffix in "" -wal; do [ ! -e "$MAIN_DB$suffix" ] || cp "$MAIN_DB$suffix" "$copy$suffix"; done
        cp "${MAIN_DB%.*}.master-key" "$WORK/$1.master-key"
        echo "$copy"
    }
    say "the large database: ready on $READY_USERS users and $READY_GRANTS grants (benchmarks/generate_database.py)"
    DB=$(large_copy ready)
    python3 "$BENCH_DIR/generate_database.py" --database "$DB" --users "$READY_USERS" --grants "$READY_GRANTS" \
        >"$OUT/generate-ready.txt" 2>&1 || { cat "$OUT/generate-ready.txt" >&2; die "generate_database.py failed"; }
    grep -E '^(GENERATE|database size)' "$OUT/generate-ready.txt"
    # A database at rest: the generator leaves its 600 MB in the page cache still to be written, and a
    # server starting meanwhile waits for the kernel's writeback at its first sync (up to 170 ms here).
    sync
    READY_RUNS=()
    for _ in 1 2 3; do start_server "$OUT/server-large.log"; READY_RUNS+=("$READY_MS"); stop_server; done
    READY_USERS_MS=$(printf '%s\n' "${READY_RUNS[@]}" | sort -n | sed -n 2p)
    echo "ready (fork to /health 200) on $READY_USERS users: ${READY_RUNS[*]} ms; median $READY_USERS_MS ms"
    rm -f "$WORK"/ready.*

    say "the large database: $LARGE_USERS users, $LARGE_GRANTS grants with a refresh token each, ${LARGE_EXPIRED_SHARE} of them expired"
    DB=$(large_copy large)
    python3 "$BENCH_DIR/generate_database.py" --database "$DB" --users "$LARGE_USERS" --grants "$LARGE_GRANTS" \
        --expired-share "$LARGE_EXPIRED_SHARE" --existing-client app >"$OUT/generate-large.txt" 2>&1 \
        || { cat "$OUT/generate-large.txt" >&2; die "generate_database.py failed"; }
    sed -n '/^rows:/,$p' "$OUT/generate-large.txt"
    sync
    start_server "$OUT/server-large.log"
    READY_LARGE_MS=$READY_MS
    SERVER_PIDS=("$SERVER_PID")
    echo "ready on the large database after $READY_LARGE_MS ms"
    # Chains: set 0 warm-up, 1 the measured load, 2 the load during the purge.
    LARGE_TOKENS="$WORK/refresh-tokens-large.txt"
    python3 "$BENCH_DIR/refresh_tokens.py" "$ISSUER" app "$APP_SECRET" "$REDIRECT" bench@example.com bench-Passw0rd-7q \
        "$(( TOKEN_CONNECTIONS * 3 ))" >"$LARGE_TOKENS" || die "could not obtain refresh tokens on the large database"
    MAIN_TOKENS_FILE=$TOKENS_FILE
    TOKENS_FILE=$LARGE_TOKENS
    for name in client_credentials refresh_token; do
        say "load: $name-large ($name on the large database)"
        CHAIN_SET=0 SUFFIX=-large-warmup SECONDS_NOW=$WARMUP load "$name"
        CHAIN_SET=1 SUFFIX=-large SECONDS_NOW=$DURATION load "$name"
        LOAD_SHAPE[$name-large]=${LOAD_SHAPE[$name]}
        grep -E '^BENCH' "$OUT/$name-large.txt" | sed 's/^/  /'
        check_load "$name-large"
        LARGE_LOADS+=("$name-large")
    done

    # The purge: purge_now.py sets the turn due, so the next maintenance round (within 5 s) runs
    # SQLStore.purgeExpired, and times it; the refresh load runs through it. wrk waits up to
    # BENCH_PURGE_TIMEOUT s for an answer, so that a stalled request shows in the latency instead of
    # breaking its chain (a timed-out refresh is retried with the token the server already rotated).
    # The rows the purge deletes are counted before the load and right after it (the purge goes on
    # meanwhile: the second count is off by the rows of its own duration, a fraction of a second
    # with a warm cache). A backlog larger than the load's length can purge (the generated
    # database's, by default: millions of rows never purged) is left to the server when the run
    # moves on; the row reports how far the purge got and at what pace.
    say "load: refresh_token-purge (the refresh load on the large database, the hourly purge triggered 2 s in)"
    EXPIRED_BEFORE=$(python3 "$BENCH_DIR/expired_rows.py" --database "$DB") || die "expired_rows.py failed"
    echo "  before the purge: $EXPIRED_BEFORE"
    (sleep 2; exec python3 "$BENCH_DIR/purge_now.py" --database "$DB" --timeout "$PURGE_TIMEOUT") >"$OUT/purge.txt" 2>&1 &
    PURGE_PID=$!
    EXTRA_PIDS+=("$PURGE_PID")
    WRK_TIMEOUT=$PURGE_TIMEOUT CHAIN_SET=2 SUFFIX=-purge SECONDS_NOW=$PURGE_LOAD_SECONDS load refresh_token
    EXPIRED_AFTER=$(python3 "$BENCH_DIR/expired_rows.py" --database "$DB") || die "expired_rows.py failed"
    echo "  after the load: $EXPIRED_AFTER"
    LOAD_SHAPE[refresh_token-purge]=${LOAD_SHAPE[refresh_token]}
    grep -E '^BENCH' "$OUT/refresh_token-purge.txt" | sed 's/^/  /'
    check_load refresh_token-purge
    LARGE_LOADS+=(refresh_token-purge)
    # purge_now.py has printed its line if the purge has committed; otherwise it is stopped (the
    # server's purge is not: it goes on, paced, until the server stops).
    kill -TERM "$PURGE_PID" 2>/dev/null || true
    wait "$PURGE_PID" 2>/dev/null || true
    cat "$OUT/purge.txt"
    PURGE_MS=$(sed -n 's/^PURGE .*\bpurge_ms=\([^ ]*\).*/\1/p' "$OUT/purge.txt")
    PURGE_END_MS=$(sed -n 's/^PURGE .*\bcommitted_ms=\([^ ]*\).*/\1/p' "$OUT/purge.txt")
    total_of() { sed -n 's/.*\btotal=\([0-9]*\).*/\1/p' <<<"$1"; }
    PURGE_LEFT=$(total_of "$EXPIRED_AFTER")
    PURGE_DELETED=$(( $(total_of "$EXPIRED_BEFORE") - PURGE_LEFT ))
    grep -q 'maintenance failed' "$OUT/server-large.log" && FAILED+=("the purge: maintenance failed (see $OUT/server-large.log)")
    TOKENS_FILE=$MAIN_TOKENS_FILE
    stop_server
    DB=$MAIN_DB
    rm -f "$WORK"/large.*
fi

# ---------------------------------------------------------------------------
# 6b. The peer: glewlwyd (Debian), the same loads against it in the same run
# ---------------------------------------------------------------------------
GL_LOADS=()
GL_NOTE=""
if [ "$GLEWLWYD" = 1 ]; then
    stop_server
    say "the peer: glewlwyd from Debian (benchmarks/glewlwyd.sh), its SQLite database on tmpfs (see docs/performance.md)"
    # shellcheck source=glewlwyd.sh
    source "$BENCH_DIR/glewlwyd.sh"
    GL_DIR=$(mktemp -d /dev/shm/glewlwyd-bench.XXXXXX 2>/dev/null || mktemp -d /tmp/glewlwyd-bench.XXXXXX)
    gl_status=0
    glewlwyd_start "$GL_DIR" >"$OUT/glewlwyd-start.txt" 2>&1 || gl_status=$?
    if [ "$gl_status" = 0 ]; then
        EXTRA_PIDS+=("$GLEWLWYD_PID")
        echo "glewlwyd $GLEWLWYD_VERSION ready in $GLEWLWYD_READY_MS ms (pid $GLEWLWYD_PID, database on $GLEWLWYD_DB_FS)"
        GL_TOKENS="$GL_DIR/refresh-tokens.txt"
        glewlwyd_refresh_tokens "$GL_DIR" "$(( TOKEN_CONNECTIONS * 2 ))" >"$GL_TOKENS" 2>>"$OUT/glewlwyd-start.txt" \
            || die "could not obtain glewlwyd refresh tokens (see $OUT/glewlwyd-start.txt)"
        SERVER_PIDS=("$GLEWLWYD_PID")
        # gl_load NAME THREADS CONNECTIONS SCRIPT URL [ENV...]: warm-up (chain set 0), then the measured load (set 1)
        gl_load() {
            local name=$1 threads=$2 connections=$3 script=$4 url=$5
            shift 5
            say "load: $name"
            run_wrk "$name-warmup" "$threads" "$connections" "$WARMUP" "$script" "$url" "$@" BENCH_TOKENS_OFFSET=0
            run_wrk "$name" "$threads" "$connections" "$DURATION" "$script" "$url" "$@" "BENCH_TOKENS_OFFSET=$TOKEN_CONNECTIONS"
            LOAD_SHAPE[$name]="-t$threads -c$connections"
            grep -E '^BENCH' "$OUT/$name.txt" | sed 's/^/  /'
            check_load "$name"
            GL_LOADS+=("$name")
        }
        gl_load gl_discovery "$GET_THREADS" "$GET_CONNECTIONS" get.lua "$GLEWLWYD_DISCOVERY"
        gl_load gl_jwks "$GET_THREADS" "$GET_CONNECTIONS" get.lua "$GLEWLWYD_JWKS"
        gl_load gl_discovery8 1 8 get.lua "$GLEWLWYD_DISCOVERY"
        gl_load gl_jwks8 1 8 get.lua "$GLEWLWYD_JWKS"
        gl_load gl_client_credentials "$TOKEN_CONNECTIONS" "$TOKEN_CONNECTIONS" token.lua "$GLEWLWYD_TOKEN" \
            BENCH_GRANT=client_credentials "BENCH_BASIC=$GLEWLWYD_CC_BASIC"
        gl_load gl_refresh_token "$TOKEN_CONNECTIONS" "$TOKEN_CONNECTIONS" token.lua "$GLEWLWYD_TOKEN" \
            BENCH_GRANT=refresh_token "BENCH_BASIC=$GLEWLWYD_APP_BASIC" "BENCH_TOKENS_FILE=$GL_TOKENS"
        GL_RSS_KB=$(rss_kb "$GLEWLWYD_PID" VmRSS)
        glewlwyd_stop "$GL_DIR" || true
    elif [ "$gl_status" = 3 ]; then
        GL_NOTE="glewlwyd could not be installed: the peer was skipped"
        echo "$GL_NOTE"
    else
        cat "$OUT/glewlwyd-start.txt" >&2
        die "glewlwyd did not start (benchmarks/glewlwyd.sh)"
    fi
    rm -rf "$GL_DIR"
fi

# ---------------------------------------------------------------------------
# 6c. PostgreSQL: the token loads on one node, then on two nodes behind HAProxy
# ---------------------------------------------------------------------------
PG_LOADS=()
if [ "$POSTGRES" = 1 ]; then
    stop_server
    say "PostgreSQL: a private cluster on this machine (Debian's PostgreSQL, its defaults: every commit flushed)"
    # shellcheck source=../scripts/postgres-cluster.sh
    source "$ROOT/scripts/postgres-cluster.sh"
    PG_DURABLE=1 start_test_postgres >"$OUT/postgres.log" 2>&1 || { cat "$OUT/postgres.log" >&2; die "PostgreSQL did not start"; }
    cat "$OUT/postgres.log"
    # pg_ctl starts PostgreSQL in a session of its own: with the kernel's autogroups that is a
    # scheduling group of its own, which gets little CPU when it wakes from idle beside loads that
    # keep both cores busy (a new connection can wait seconds: docs/performance.md, eighth session).
    if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ]; then
        echo "note: kernel.sched_autogroup_enabled=1: PostgreSQL is a CPU scheduling group of its own; new connections during a load can wait (docs/performance.md)"
    fi
    PG_URL=$(new_test_database bench)
    TESSERA_MASTER_KEY=$(openssl rand -base64 32)
    export TESSERA_MASTER_KEY
    "$BIN" clients add --database "$PG_URL" --name bench --id bench-cc --secret "$CC_SECRET" \
        --grant-type client_credentials --scope api --json >/dev/null || die "tessera clients add on PostgreSQL failed"
    "$BIN" clients add --database "$PG_URL" --name app --id app --secret "$APP_SECRET" --redirect-uri "$REDIRECT" \
        --first-party --scope openid --scope offline_access \
        --grant-type authorization_code --grant-type refresh_token --json >/dev/null || die "tessera clients add (app) on PostgreSQL failed"
    printf 'bench-Passw0rd-7q\n' | "$BIN" users add bench@example.com --database "$PG_URL" --password-stdin >/dev/null \
        || die "tessera users add on PostgreSQL failed"
    CC_BASIC=$(printf '%s:%s' bench-cc "$CC_SECRET" | base64 -w0)

    # start_node PORT: a node on the PostgreSQL database; prints its pid
    start_node() {
        "$BIN" serve --host 127.0.0.1 --port "$1" --database "$PG_URL" >>"$OUT/server-pg-$1.log" 2>&1 &
        local pid=$! deadline=$(( $(date +%s) + 30 ))
        until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$1/health/ready" || true)" = 200 ]; do
            kill -0 "$pid" 2>/dev/null || { cat "$OUT/server-pg-$1.log" >&2; die "tessera serve on PostgreSQL exited during start"; }
            [ "$(date +%s)" -lt "$deadline" ] || die "tessera serve on PostgreSQL was not ready within 30 s"
            sleep 0.05
        done
        echo "$pid"
    }
    free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
    PORT_A=$(free_port)
    PID_A=$(start_node "$PORT_A") || die "the first PostgreSQL node did not start"; EXTRA_PIDS+=("$PID_A")
    # Six chain sets: warm-up and measured, for one node, one node behind HAProxy and two nodes.
    PG_TOKENS="$WORK/refresh-tokens-pg.txt"
    python3 "$BENCH_DIR/refresh_tokens.py" "http://127.0.0.1:$PORT_A" app "$APP_SECRET" "$REDIRECT" bench@example.com bench-Passw0rd-7q \
        "$(( TOKEN_CONNECTIONS * 6 ))" >"$PG_TOKENS" || die "could not obtain refresh tokens on PostgreSQL"
    TOKENS_FILE=$PG_TOKENS

    # pg_load NAME KIND URL SET: the warm-up with chain set 2 x SET, then the measured load with
    # 2 x SET + 1 (a set is a chain a connection: a chain's tokens, once rotated, can't start another load)
    pg_load() {
        local name=$1 kind=$2 url=$3 set=$4 basic
        if [ "$kind" = client_credentials ]; then basic=$CC_BASIC; else basic=$APP_BASIC; fi
        say "load: $name"
        for part in warmup measured; do
            local seconds=$DURATION suffix="" offset=$(( TOKEN_CONNECTIONS * (2 * set + 1) ))
            if [ "$part" = warmup ]; then seconds=$WARMUP; suffix=-warmup; offset=$(( TOKEN_CONNECTIONS * 2 * set )); fi
            run_wrk "$name$suffix" "$TOKEN_CONNECTIONS" "$TOKEN_CONNECTIONS" "$seconds" token.lua "$url" BENCH_GRANT="$kind" \
                "BENCH_BASIC=$basic" "BENCH_TOKENS_FILE=$TOKENS_FILE" "BENCH_TOKENS_OFFSET=$offset"
        done
        [ "$(bad_answers "$name-warmup")" = 0 ] || FAILED+=("$name (warm-up): $(bad_answers "$name-warmup") non-200 answers")
        LOAD_SHAPE[$name]="-t$TOKEN_CONNECTIONS -c$TOKEN_CONNECTIONS"
        grep -E '^BENCH' "$OUT/$name.txt" | sed 's/^/  /'
        check_load "$name"
        PG_LOADS+=("$name")
    }
    # start_haproxy PORT...: HAProxy in front of the nodes on these ports (round robin, HTTP mode),
    # on a port of its own (LB_PORT) once it answers
    start_haproxy() {
        LB_PORT=$(free_port)
        {
            printf 'global\n    maxconn 1000\ndefaults\n    mode http\n    timeout connect 1s\n    timeout client 30s\n    timeout server 30s\n'
            printf 'frontend tessera\n    bind 127.0.0.1:%s\n    default_backend nodes\nbackend nodes\n    balance roundrobin\n    http-reuse always\n' "$LB_PORT"
            local port
            for port in "$@"; do printf '    server n%s 127.0.0.1:%s\n' "$port" "$port"; done
        } >"$WORK/haproxy.cfg"
        cat "$WORK/haproxy.cfg" >>"$OUT/haproxy.log"
        "$(command -v haproxy || echo /usr/sbin/haproxy)" -db -f "$WORK/haproxy.cfg" >>"$OUT/haproxy.log" 2>&1 &
        HAPROXY_PID=$!
        EXTRA_PIDS+=("$HAPROXY_PID")
        until curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$LB_PORT/health/ready"; do
            kill -0 "$HAPROXY_PID" 2>/dev/null || { cat "$OUT/haproxy.log" >&2; die "HAProxy did not start"; }
            sleep 0.05
        done
    }
    SERVER_PIDS=("$PID_A")
    pg_load pg1_client_credentials client_credentials "http://127.0.0.1:$PORT_A/token" 0
    pg_load pg1_refresh_token refresh_token "http://127.0.0.1:$PORT_A/token" 0

    # The same node behind HAProxy: what the load balancer's hop costs, apart from a second node's
    # (both are in the two nodes' figures; one node alone keeps the two cores busy).
    say "the same node behind HAProxy"
    start_haproxy "$PORT_A"
    SERVER_PIDS=("$PID_A")
    pg_load pg1lb_refresh_token refresh_token "http://127.0.0.1:$LB_PORT/token" 1
    kill -TERM "$HAPROXY_PID"; wait "$HAPROXY_PID" 2>/dev/null || true

    say "a second node on the same database, both behind HAProxy (round robin)"
    PORT_B=$(free_port)
    PID_B=$(start_node "$PORT_B") || die "the second PostgreSQL node did not start"; EXTRA_PIDS+=("$PID_B")
    start_haproxy "$PORT_A" "$PORT_B"
    SERVER_PIDS=("$PID_A" "$PID_B")
    pg_load pg2_client_credentials client_credentials "http://127.0.0.1:$LB_PORT/token" 1
    pg_load pg2_refresh_token refresh_token "http://127.0.0.1:$LB_PORT/token" 2
fi

# ---------------------------------------------------------------------------
# 7. The table
# ---------------------------------------------------------------------------
say "results ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores shared by wrk and the server, ${DURATION} s per load after ${WARMUP} s warm-up)"
printf '%-25s %-9s %9s %8s %8s %8s %8s %11s %12s %9s %9s\n' load "wrk" "req/s" "p50 ms" "p90 ms" "p99 ms" "non-2xx" \
    "server CPU" "server CPU" "wrk CPU" "other CPU"
printf '%-25s %-9s %9s %8s %8s %8s %8s %11s %12s %9s %9s\n' "" "" "" "" "" "" "" "(cores)" "ms/request" "(cores)" "(cores)"
for name in "${LOADS[@]}" "${LARGE_LOADS[@]}" "${GL_LOADS[@]}" "${PG_LOADS[@]}"; do
    bad=$(bad_answers "$name")
    read -r cores ms_per_request < <(server_cpu "$name")
    printf '%-25s %-9s %9s %8s %8s %8s %8s %11s %12s %9s %9s\n' "$name" "${LOAD_SHAPE[$name]}" "$(field "$name" rps)" \
        "$(field "$name" p50_ms)" "$(field "$name" p90_ms)" "$(field "$name" p99_ms)" "$bad" "$cores" "$ms_per_request" \
        "$(wrk_cpu "$name")" "$(other_cpu "$name")"
    # In the PostgreSQL loads the "other" CPU is PostgreSQL's (and HAProxy's) own work.
    case "$name" in pg*) continue ;; esac
    if awk -v o="$(other_cpu "$name")" 'BEGIN { exit !(o > 0.1) }'; then DISTURBED+=("$name"); fi
done
if [ "$POSTGRES" = 1 ]; then
    echo "(pg1_*: one node on PostgreSQL; pg1lb_*: the same node behind HAProxy; pg2_*: two nodes behind HAProxy,"
    echo " server CPU summed over both; other CPU: PostgreSQL's and HAProxy's, on the same 2 cores)"
fi
if [ ${#DISTURBED[@]} -gt 0 ]; then
    echo "WARNING: another job used more than 0.1 core during: ${DISTURBED[*]} (other CPU column);"
    echo "         those figures understate the server. Run again on a quiet machine."
fi

verdict() { awk -v v="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = (dir == "min") ? (v >= t) : (v < t); print ok ? "meets" : "MISSES" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
CC_RPS=$(field client_credentials rps)
RT_RPS=$(field refresh_token rps)
CC_RATIO=$(ratio "$CC_RPS" "$OPENSSL_2")
RT_RATIO=$(ratio "$RT_RPS" "$OPENSSL_2")
DISC_RPS=$(field discovery rps)
JWKS_RPS=$(field jwks rps)
IDLE_MIB=$(awk -v k="$IDLE_RSS_KB" 'BEGIN { printf "%.1f", k / 1024 }')
IDLE_MB=$(awk -v k="$IDLE_RSS_KB" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')

echo
echo "reference: openssl RSA-2048 sign/s  one core $OPENSSL_1, two cores $OPENSSL_2${OPENSSL_1_NOIFMA:+ (one core without AVX-512 IFMA: $OPENSSL_1_NOIFMA)}"
echo "server signer: ${SIGNER:-unknown}"
disturbed() { case " ${DISTURBED[*]} " in *" $1 "*) echo " (load disturbed)" ;; esac; }
# row MEASURE VALUE TARGET VERDICT: one line of the targets table (issue 30)
row() { printf '%-60s %14s %12s  %s\n' "$1" "$2" "$3" "$4"; }
# peer_row LABEL OURS PEERS: tessera req/s over glewlwyd req/s of the same load, >= 1.2
peer_row() {
    if [ -z "$(field "$3" rps 2>/dev/null)" ]; then row "$1" "-" ">= 1.2" "not measured (${GL_NOTE:-no peer})"; return; fi
    local r; r=$(ratio "$(field "$2" rps)" "$(field "$3" rps)")
    row "$1" "$r" ">= 1.2" "$(verdict "$r" 1.2 min) ($(field "$2" rps) / $(field "$3" rps) req/s)$(disturbed "$2")"
}
# beside_row NAME SIGNATURES TARGET: the server's CPU a request beside its RS256 signatures (its
# ms/request less SIGNATURES x one signature at OpenSSL's one-core rate), against what the ratio
# TARGET leaves it on this machine with every core busy (the machine's time a request at that rate,
# less the signatures, wrk's CPU a request and, on PostgreSQL, PostgreSQL's and HAProxy's). The
# figure to drive down, whether or not the CPU signs fast (AVX-512 IFMA).
beside_row() {
    local name=$1 signatures=$2 target=$3 cores ms other=0 figures beside budget sign
    read -r cores ms < <(server_cpu "$name")
    case "$name" in pg*) other=$(other_cpu "$name") ;; esac
    figures=$(awk -v ms="$ms" -v n="$signatures" -v o1="$OPENSSL_1" -v o2="$OPENSSL_2" -v t="$target" -v rps="$(field "$name" rps)" \
        -v wrk="$(wrk_cpu "$name")" -v other="$other" -v cpus="$(nproc)" \
        'BEGIN { sign = 1000 / o1; beside = ms - n * sign; budget = 1000 * cpus / (t * o2) - n * sign - 1000 * (wrk + other) / rps
                 printf "%.3f %.3f %.3f", beside, budget, sign }')
    read -r beside budget sign <<<"$figures"
    local what="its signature"; [ "$signatures" = 1 ] || what="its $signatures signatures"
    row "  server CPU a request beside $what, ms" "$beside" "(info)" \
        "$target x leaves $budget with the cores all busy (a signature: $sign ms; cores used $cores)"
}
echo
row measure value target verdict
peer_row "discovery, 64 connections / glewlwyd" discovery gl_discovery
peer_row "discovery, 8 connections / glewlwyd" discovery8 gl_discovery8
peer_row "JWKS, 64 connections / glewlwyd" jwks gl_jwks
peer_row "JWKS, 8 connections / glewlwyd" jwks8 gl_jwks8
row "client_credentials req/s / openssl 2-core sign/s" "$CC_RATIO" ">= 0.65" \
    "$(verdict "$CC_RATIO" 0.65 min) ($CC_RPS req/s)$REF_NOTE$(disturbed client_credentials)"
beside_row client_credentials 1 0.65
row "refresh_token on SQLite req/s / openssl 2-core sign/s" "$RT_RATIO" ">= 0.3" \
    "$(verdict "$RT_RATIO" 0.3 min) ($RT_RPS req/s)$REF_NOTE$(disturbed refresh_token)"
beside_row refresh_token 2 0.3
if [ "$POSTGRES" = 1 ]; then
    PG1_RATIO=$(ratio "$(field pg1_refresh_token rps)" "$OPENSSL_2")
    row "refresh_token on PostgreSQL, 1 node / openssl 2-core" "$PG1_RATIO" ">= 0.25" \
        "$(verdict "$PG1_RATIO" 0.25 min) ($(field pg1_refresh_token rps) req/s)"
    beside_row pg1_refresh_token 2 0.25
    PG2_P99=$(field pg2_refresh_token p99_ms)
    row "refresh_token on PostgreSQL, 2 nodes: p99 ms" "$PG2_P99" "<= 20" "$(verdict "$PG2_P99" 20.000001 max)"
    PG21=$(ratio "$(field pg2_refresh_token rps)" "$(field pg1_refresh_token rps)")
    row "  and its req/s / one node's" "$PG21" ">= 1" "$(verdict "$PG21" 1 min)"
    # Where the two nodes' rate goes: the load balancer's hop, and the second node behind it.
    row "  one node behind HAProxy: req/s / one node's" "$(ratio "$(field pg1lb_refresh_token rps)" "$(field pg1_refresh_token rps)")" \
        "(info)" "the hop through HAProxy ($(field pg1lb_refresh_token rps) req/s)"
    row "  two nodes' req/s / one node's behind HAProxy" "$(ratio "$(field pg2_refresh_token rps)" "$(field pg1lb_refresh_token rps)")" \
        "(info)" "the second node, the load balancer the same"
else
    row "refresh_token on PostgreSQL" "-" ">= 0.25" "not measured (--no-postgres)"
fi
SIGNIN_RPS=$(field password_signin rps)
SIGNIN_RATIO=$(ratio "$SIGNIN_RPS" "$SIGNIN_TARGET_RPS")
SIGNIN_P99=$(field password_signin p99_ms)
row "password sign-in, native API, sign-ins/s / (0.8 x $SIGNIN_CORES / hash)" "$SIGNIN_RATIO" ">= 1" \
    "$(verdict "$SIGNIN_RATIO" 1 min) ($SIGNIN_RPS sign-ins/s; hash $HASH_MS ms)$SCRYPT_NOTE$(disturbed password_signin)"
if [ "$(field password_signin requests)" -gt 0 ]; then
    row "  and its p99 at $SIGNIN_CONNECTIONS connections, ms (< 3 x hash)" "$SIGNIN_P99" "< $SIGNIN_P99_TARGET_MS" \
        "$(verdict "$SIGNIN_P99" "$SIGNIN_P99_TARGET_MS" max) ($(field password_signin requests) sign-ins)$SCRYPT_NOTE$(disturbed password_signin)"
else
    row "  and its p99 at $SIGNIN_CONNECTIONS connections, ms (< 3 x hash)" "-" "< $SIGNIN_P99_TARGET_MS" \
        "MISSES (no sign-in completed in ${DURATION} s)"
fi
CC8_P99=$(field client_credentials8 p99_ms)
row "token endpoint p99 at 8 connections (client_credentials), ms" "$CC8_P99" "<= 8" "$(verdict "$CC8_P99" 8.000001 max)$(disturbed client_credentials8)"
row "idle VmRSS after start, MB (10^6 bytes; MiB: $IDLE_MIB)" "$IDLE_MB" "< 40" "$(verdict "$IDLE_MB" 40 max)"
AFTER_MB=$(awk -v k="$RSS_AFTER_KB" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')
row "VmRSS after the loads, MB" "$AFTER_MB" "< 120" "$(verdict "$AFTER_MB" 120 max) (peak VmHWM $(( HWM_KB / 1024 )) MiB)"
row "ready (fork to /health 200), populated db, median of 3, ms" "$READY_MS_SECOND" "< 100" \
    "$(verdict "$READY_MS_SECOND" 100 max) (a small database)"
row "ready on an empty database (generates 2 RSA keys), ms" "$READY_FIRST_MS" "(info)" ""
if [ "$LARGE" = 1 ]; then
    row "ready with $READY_USERS users, $READY_GRANTS grants, ms (median of 3)" "$READY_USERS_MS" "< 100" \
        "$(verdict "$READY_USERS_MS" 100 max) (${READY_RUNS[*]} ms)"
    row "ready with $LARGE_USERS users, $LARGE_GRANTS grants, ms (info)" "$READY_LARGE_MS" "(info)" ""
    # large_row NAME: the large database's req/s and p99 of a token load against the small database's
    large_row() {
        local rps p99
        rps=$(ratio "$(field "$1-large" rps)" "$(field "$1" rps)")
        p99=$(ratio "$(field "$1-large" p99_ms)" "$(field "$1" p99_ms)")
        row "  $1 req/s, large / small database" "$rps" ">= 0.8" \
            "$(verdict "$rps" 0.8 min) ($(field "$1-large" rps) / $(field "$1" rps) req/s)$(disturbed "$1-large")"
        row "  $1 p99, large / small database" "$p99" "<= 1.2" \
            "$(verdict "$p99" 1.2000001 max) ($(field "$1-large" p99_ms) / $(field "$1" p99_ms) ms)$(disturbed "$1-large")"
    }
    row "$LARGE_USERS users, $LARGE_GRANTS grants, vs the small database:" "" "(issue 30)" ""
    large_row client_credentials
    large_row refresh_token
    PURGE_P99=$(ratio "$(field refresh_token-purge p99_ms)" "$(field refresh_token-large p99_ms)")
    # The issue's target: the purge doesn't stall requests (p99 within 20 % while it runs). A purge
    # that deleted nothing would meet it trivially, so it must have deleted rows during the load;
    # its pace is reported beside the load's own refreshes (each leaves a row to purge a day after
    # it expires), not judged: it takes a tenth of the database's time by design.
    PURGE_RATE=$(awk -v n="$PURGE_DELETED" -v s="$PURGE_LOAD_SECONDS" 'BEGIN { printf "%.0f", n / (s - 2) }')
    PURGE_NOTE="$(verdict "$PURGE_P99" 1.2000001 max) ($(field refresh_token-purge p99_ms) / $(field refresh_token-large p99_ms) ms"
    PURGE_NOTE="$PURGE_NOTE; purged $PURGE_DELETED rows in the load, $PURGE_RATE a second against $(field refresh_token-purge rps) refreshes"
    if [ -n "$PURGE_MS" ] && [ "$PURGE_MS" != - ]; then
        PURGE_NOTE="$PURGE_NOTE; the purge took $PURGE_MS ms"
        # purge_now.py starts 2 s into the load
        if [ "$(( 2 + PURGE_END_MS / 1000 ))" -ge "$PURGE_LOAD_SECONDS" ]; then PURGE_NOTE="$PURGE_NOTE, past the ${PURGE_LOAD_SECONDS} s load"; fi
    else
        PURGE_NOTE="$PURGE_NOTE; $PURGE_LEFT rows left, ≈ $(awk -v n="$PURGE_LEFT" -v r="$PURGE_RATE" 'BEGIN { printf "%.0f", (r > 0 ? n / r / 60 : 0) }') min more at this pace"
    fi
    PURGE_NOTE="$PURGE_NOTE)$(disturbed refresh_token-purge)"
    if [ "$PURGE_DELETED" -le 0 ]; then PURGE_NOTE="MISSES (the purge deleted nothing during the load: $OUT/purge.txt, $OUT/server-large.log)"; fi
    row "  refresh_token p99 during the purge / without" "$PURGE_P99" "<= 1.2" "$PURGE_NOTE"
else
    row "the large database: ready, token loads, purge" "-" "(issue 30)" "not measured (--no-large)"
fi
if [ ${#GL_LOADS[@]} -gt 0 ]; then
    row "glewlwyd client_credentials / refresh req/s (info)" "$(field gl_client_credentials rps) / $(field gl_refresh_token rps)" "(info)" \
        "one RS256 signature each; its refresh answers carry no ID token"
    row "glewlwyd VmRSS after its loads, MB (info)" "$(awk -v k="$GL_RSS_KB" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }')" "(info)" ""
fi
echo
echo "wrk runs on the same 2 cores as the server: every figure above is what is left to the server"
echo "next to the load generator, not the server's capacity on 2 dedicated cores."
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg); raw outputs in $OUT"

if [ ${#FAILED[@]} -gt 0 ]; then
    echo
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
    echo "run.sh: BENCHMARK FAILED: some requests were not answered 200" >&2
    for failure in "${FAILED[@]}"; do echo "  - $failure" >&2; done
    echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" >&2
    exit 1
fi
echo "all loads answered 200 only."
