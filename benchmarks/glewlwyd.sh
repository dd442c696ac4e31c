#!/usr/bin/env bash
# A private glewlwyd (Debian's package, 2.7.x) as a peer OpenID provider for the benchmark:
# see docs/performance.md, "The peer: glewlwyd".
#
#   bash benchmarks/glewlwyd.sh [start] [DIR] [PORT]   install if missing, set up DIR, start, print KEY=VALUE lines
#   bash benchmarks/glewlwyd.sh stop DIR               stop the instance of DIR (SIGTERM, then SIGKILL after 10 s)
#   bash benchmarks/glewlwyd.sh refresh-tokens DIR N   print N refresh tokens (N chains) of the user-flow client
#   bash benchmarks/glewlwyd.sh check DIR              discovery, JWKS, one client_credentials token (RS256 signature
#                                                      verified with openssl) and one refresh; exit 2 on any failure
#
# DIR defaults to a new /tmp/glewlwyd-bench.XXXXXX folder; an existing DIR is wiped of this script's files
# first. The SQLite database is in DIR: glewlwyd commits every token it issues and cannot be told to relax
# SQLite's default synchronous=FULL, so on a disk each token waits for an fsync; a DIR on tmpfs
# (/dev/shm/...) takes that out (GLEWLWYD_DB_FS says which). PORT defaults to a free loopback port.
# `start` prints (and, when this file is sourced, also sets):
#   GLEWLWYD_PID GLEWLWYD_DIR GLEWLWYD_BASE GLEWLWYD_ISSUER GLEWLWYD_DISCOVERY GLEWLWYD_JWKS GLEWLWYD_TOKEN
#   GLEWLWYD_CC_ID GLEWLWYD_CC_SECRET GLEWLWYD_CC_SCOPE GLEWLWYD_CC_BASIC
#   GLEWLWYD_APP_ID GLEWLWYD_APP_SECRET GLEWLWYD_APP_BASIC GLEWLWYD_REDIRECT_URI GLEWLWYD_AUTHORIZE
#   GLEWLWYD_USER GLEWLWYD_USER_PASSWORD GLEWLWYD_DB GLEWLWYD_DB_FS GLEWLWYD_LOG GLEWLWYD_READY_MS GLEWLWYD_VERSION
# (the same lines are kept in DIR/glewlwyd.env; *_BASIC is base64 of id:secret, for token.lua's BENCH_BASIC).
#
# When sourced (run.sh), the functions glewlwyd_start DIR PORT, glewlwyd_stop DIR,
# glewlwyd_refresh_tokens DIR N and glewlwyd_check DIR return the statuses below instead of exiting.
#
# Exit status: 0 done; 2 setup or check failed (the reason on stderr); 3 glewlwyd is not installed and
# could not be installed (a notice on stderr: the caller skips the peer).
#
# What is set up (every choice is explained in docs/performance.md):
#   - the config file DIR/glewlwyd.conf: the Debian sample's settings, bound to 127.0.0.1:PORT, logging to
#     DIR/glewlwyd.log at WARNING (Debian's INFO writes a line for every token issued);
#   - a fresh SQLite database DIR/glewlwyd.sqlite3 from the package's schema, in WAL mode;
#   - through the admin REST API (default admin of the schema), then a restart: the OpenID Connect plugin
#     instance `oidc` (libprotocol_oidc.so) signing RS256 with a new RSA-2048 key (openssl), JWT access
#     tokens, rotating refresh tokens ("refresh-token-one-use": "always"); a confidential client for
#     client_credentials (scope `api`, client_secret_basic); a confidential user-flow client (authorization
#     code + refresh_token, redirect http://127.0.0.1:9/cb); a user who has granted `openid` to that client.
#   Both clients authenticate with a `client_secret` (glewlwyd compares it as stored), not a client
#   `password` (PBKDF2 with 150,000 iterations per request: a password hash, not a fair cost for a
#   machine secret).

GLEWLWYD_SCRIPT_VERSION=1

_gl_say() { printf 'glewlwyd.sh: %s\n' "$*" >&2; }
_gl_fail() { printf 'glewlwyd.sh: FAILED: %s\n' "$*" >&2; return 2; }
_gl_now_ns() { date +%s%N; }

# Installs glewlwyd (and the few tools this script needs) from Debian when missing.
# Returns 3 with a notice when that is not possible.
glewlwyd_ensure_installed() {
    local packages=() sudo=""
    if ! command -v glewlwyd >/dev/null 2>&1 || [ ! -e /usr/lib/glewlwyd/plugin/libprotocol_oidc.so ]; then
        packages+=(glewlwyd)
    fi
    command -v sqlite3 >/dev/null 2>&1 || packages+=(sqlite3)
    command -v openssl >/dev/null 2>&1 || packages+=(openssl)
    command -v curl >/dev/null 2>&1 || packages+=(curl)
    command -v python3 >/dev/null 2>&1 || packages+=(python3)
    [ ${#packages[@]} -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
            _gl_say "SKIP: ${packages[*]} missing and not root (no password-less sudo): cannot apt-get install"
            return 3
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        _gl_say "SKIP: ${packages[*]} missing and no apt-get on this machine"
        return 3
    fi
    _gl_say "installing ${packages[*]} (Debian)"
    # The package index may be current already: try without an update first.
    if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1; then
        if ! { $sudo apt-get update -qq >/dev/null 2>&1 &&
               DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1; }; then
            _gl_say "SKIP: apt-get could not install ${packages[*]}"
            return 3
        fi
    fi
    if ! command -v glewlwyd >/dev/null 2>&1 || [ ! -e /usr/lib/glewlwyd/plugin/libprotocol_oidc.so ]; then
        _gl_say "SKIP: glewlwyd installed but /usr/bin/glewlwyd or libprotocol_oidc.so is missing"
        return 3
    fi
}

# The package's SQLite schema (dbconfig-common's copy, or the gzipped one in the docs).
_gl_schema() {
    local f=/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3
    if [ -r "$f" ]; then cat "$f"; return; fi
    f=/usr/share/doc/glewlwyd/database/init.sqlite3.sql.gz
    if [ -r "$f" ]; then gzip -dc "$f"; return; fi
    return 1
}

_gl_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# _gl_config DIR PORT: the config file. The Debian sample (/etc/glewlwyd/glewlwyd.conf) with these changes:
# bind_address and port, external_url, the log (file in DIR, WARNING instead of INFO), our own database
# block instead of the @include of dbconfig's, and the TLS settings left out (glewlwyd insists on the key
# and certificate paths whenever use_secure_connection is present, even when it is false).
_gl_config() {
    local dir=$1 port=$2
    cat <<EOF
# glewlwyd for the Tessera benchmark (written by benchmarks/glewlwyd.sh): the Debian sample's settings,
# bound to 127.0.0.1:$port, logging to a file at WARNING, its own SQLite database.
port=$port
bind_address="127.0.0.1"
external_url="http://127.0.0.1:$port"
login_url="login.html"
api_prefix="api"
allow_origin="*"
allow_methods="GET, POST, PUT, DELETE, OPTIONS"
allow_headers="Origin, X-Requested-With, Content-Type, Accept, Bearer, Authorization, DPoP"
expose_headers="Content-Encoding, Authorization"
log_mode="file"
log_level="WARNING"
log_file="$dir/glewlwyd.log"
cookie_secure=0
cookie_same_site="empty"
session_expiration=2419200
session_key="GLEWLWYD2_SESSION_ID"
admin_session_authentication="cookie"
profile_session_authentication="cookie"
allow_multiple_user_per_session=true
login_api_enabled=true
plugin_api_run_enabled=""
add_x_frame_option_header_deny=true
max_post_size=16778240
admin_scope="g_admin"
profile_scope="g_profile"
user_module_path="/usr/lib/glewlwyd/user"
client_module_path="/usr/lib/glewlwyd/client"
user_auth_scheme_module_path="/usr/lib/glewlwyd/scheme"
plugin_module_path="/usr/lib/glewlwyd/plugin"
hash_algorithm="SHA512"
database =
{
  type = "sqlite3"
  path = "$dir/glewlwyd.sqlite3"
};
EOF
}

# _gl_api METHOD PATH JAR [JSON]: one admin/user API call; returns 2 unless the answer is 200.
_gl_api() {
    local method=$1 path=$2 jar=$3 body=${4:-} out status
    out=$(mktemp)
    if [ -n "$body" ]; then
        status=$(curl -s -o "$out" -w '%{http_code}' -X "$method" -b "$jar" -c "$jar" \
            -H 'Content-Type: application/json' --data-binary "$body" "$_GL_BASE/api$path" || true)
    else
        status=$(curl -s -o "$out" -w '%{http_code}' -X "$method" -b "$jar" -c "$jar" "$_GL_BASE/api$path" || true)
    fi
    if [ "$status" != 200 ]; then
        _gl_say "$method /api$path answered ${status:-nothing}: $(head -c 600 "$out")"
        rm -f "$out"
        return 2
    fi
    rm -f "$out"
}

# _gl_launch DIR: forks glewlwyd (its output to DIR/glewlwyd.out) and sets _GL_PID.
_gl_launch() {
    local dir=$1
    glewlwyd --config-file="$dir/glewlwyd.conf" </dev/null >>"$dir/glewlwyd.out" 2>&1 &
    _GL_PID=$!
    echo "$_GL_PID" >"$dir/glewlwyd.pid"
}

# _gl_wait URL DIR: polls URL until 200 (30 s at most, the process must stay alive).
_gl_wait() {
    local url=$1 dir=$2 deadline=$(( $(_gl_now_ns) + 30000000000 ))
    while :; do
        [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url" || true)" = 200 ] && return 0
        if ! kill -0 "$_GL_PID" 2>/dev/null; then
            tail -n 20 "$dir/glewlwyd.out" "$dir/glewlwyd.log" >&2 2>/dev/null
            _gl_fail "glewlwyd exited during start (see $dir/glewlwyd.out and glewlwyd.log)"; return 2
        fi
        [ "$(_gl_now_ns)" -lt "$deadline" ] || { _gl_fail "no 200 from $url within 30 s"; return 2; }
        sleep 0.01
    done
}

# _gl_is_ours PID DIR: the process is the glewlwyd of DIR's config (not a recycled pid).
_gl_is_ours() {
    [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "--config-file=$2/glewlwyd.conf"
}

_gl_kill() {
    local pid=$1 dir=$2
    _gl_is_ours "$pid" "$dir" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || true
}

glewlwyd_stop() {
    local dir=${1:-}
    [ -n "$dir" ] || { _gl_fail "stop: which DIR?"; return 2; }
    dir=$(cd "$dir" 2>/dev/null && pwd) || { _gl_fail "stop: no folder $1"; return 2; }
    local pid; pid=$(cat "$dir/glewlwyd.pid" 2>/dev/null || true)
    _gl_kill "$pid" "$dir"
    rm -f "$dir/glewlwyd.pid"
}

glewlwyd_start() {
    local dir=${1:-} port=${2:-} status=0
    glewlwyd_ensure_installed || status=$?
    [ "$status" = 0 ] || return "$status"

    if [ -z "$dir" ]; then dir=$(mktemp -d /tmp/glewlwyd-bench.XXXXXX) || { _gl_fail "mktemp"; return 2; }; fi
    mkdir -p "$dir" && chmod 700 "$dir" && dir=$(cd "$dir" && pwd) || { _gl_fail "cannot use folder $dir"; return 2; }
    if [ -e "$dir/glewlwyd.pid" ]; then glewlwyd_stop "$dir"; fi
    rm -f "$dir"/glewlwyd.{conf,sqlite3,sqlite3-wal,sqlite3-shm,log,out,env,pid} "$dir"/{key,pub}.pem "$dir"/{admin,user}.jar
    [ -n "$port" ] || port=$(_gl_free_port) || { _gl_fail "no free port"; return 2; }
    _GL_BASE="http://127.0.0.1:$port"
    if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$_GL_BASE/" || true)" != 000 ]; then
        _gl_fail "something already answers on 127.0.0.1:$port"; return 2
    fi

    # Database: the package's schema (it creates the default admin, the database user and client
    # backends and the scopes g_admin, g_profile, openid), then WAL mode (kept in the file).
    _gl_schema | sqlite3 "$dir/glewlwyd.sqlite3" || { _gl_fail "could not load the sqlite3 schema"; return 2; }
    [ "$(sqlite3 "$dir/glewlwyd.sqlite3" 'PRAGMA journal_mode=WAL;')" = wal ] || { _gl_fail "WAL mode refused"; return 2; }
    _gl_config "$dir" "$port" >"$dir/glewlwyd.conf"

    # Signing key: RSA-2048 (PKCS #8 private key, SubjectPublicKeyInfo public key), generated now.
    (umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/key.pem" 2>/dev/null) &&
        openssl pkey -in "$dir/key.pem" -pubout -out "$dir/pub.pem" 2>/dev/null || { _gl_fail "openssl key generation"; return 2; }

    local issuer="$_GL_BASE/api/oidc"
    local cc_id=bench-cc cc_secret app_id=bench-app app_secret user=bench user_password
    local redirect="http://127.0.0.1:9/cb"
    cc_secret=$(openssl rand -hex 21); app_secret=$(openssl rand -hex 21); user_password=$(openssl rand -hex 12)

    # 1. First start on the fresh database, provisioning through the admin API.
    _gl_launch "$dir"
    _gl_wait "$_GL_BASE/config" "$dir" || { _gl_kill "$_GL_PID" "$dir"; return 2; }
    local plugin cc app usr
    plugin=$(python3 - "$dir/key.pem" "$dir/pub.pem" "$issuer" <<'EOF'
import json, sys
key, cert, iss = open(sys.argv[1]).read(), open(sys.argv[2]).read(), sys.argv[3]
print(json.dumps({
    "module": "oidc", "name": "oidc", "display_name": "OpenID Connect (benchmark)",
    "parameters": {
        "iss": iss,
        "jwt-type": "rsa", "jwt-key-size": "256", "key": key, "cert": cert,   # RS256
        "access-token-duration": 3600, "refresh-token-duration": 1209600, "code-duration": 600,
        "refresh-token-rolling": True,
        "refresh-token-one-use": "always",      # rotation on every use, as Tessera does
        "allow-non-oidc": True,                 # needed for client_credentials on the OIDC plugin
        "auth-type-code-enabled": True, "auth-type-token-enabled": False, "auth-type-none-enabled": False,
        "auth-type-password-enabled": False, "auth-type-client-enabled": True,
        "auth-type-device-enabled": False, "auth-type-refresh-enabled": True,
        "subject-type": "public", "jwks-show": True, "allowed-scope": ["openid", "api"], "scope": [],
        "request-parameter-allow": False, "session-management-allowed": False,
        "introspection-revocation-allowed": False, "register-client-allowed": False,
        "oauth-dpop-allowed": False, "oauth-par-allowed": False, "oauth-ciba-allowed": False,
    },
}))
EOF
) || { _gl_kill "$_GL_PID" "$dir"; _gl_fail "python3"; return 2; }
    cc=$(python3 -c 'import json, sys; print(json.dumps({"client_id": sys.argv[1], "name": "benchmark client_credentials",
        "confidential": True, "enabled": True, "scope": ["api"], "authorization_type": ["client_credentials"],
        "token_endpoint_auth_method": ["client_secret_basic"], "client_secret": sys.argv[2], "redirect_uri": []}))' "$cc_id" "$cc_secret")
    app=$(python3 -c 'import json, sys; print(json.dumps({"client_id": sys.argv[1], "name": "benchmark app",
        "confidential": True, "enabled": True, "scope": [], "authorization_type": ["code", "refresh_token"],
        "token_endpoint_auth_method": ["client_secret_basic"], "client_secret": sys.argv[2], "redirect_uri": [sys.argv[3]]}))' \
        "$app_id" "$app_secret" "$redirect")
    usr=$(python3 -c 'import json, sys; print(json.dumps({"username": sys.argv[1], "name": "Bench User",
        "email": "bench@example.com", "enabled": True, "scope": ["openid"], "password": sys.argv[2]}))' "$user" "$user_password")
    if ! { _gl_api POST /auth/ "$dir/admin.jar" '{"username":"admin","password":"password"}' &&
           _gl_api POST /mod/plugin/ "$dir/admin.jar" "$plugin" &&
           _gl_api POST /client/ "$dir/admin.jar" "$cc" &&
           _gl_api POST /client/ "$dir/admin.jar" "$app" &&
           _gl_api POST /user/ "$dir/admin.jar" "$usr" &&
           _gl_api POST /auth/ "$dir/user.jar" "$(python3 -c 'import json, sys; print(json.dumps({"username": sys.argv[1], "password": sys.argv[2]}))' "$user" "$user_password")" &&
           _gl_api PUT "/auth/grant/$app_id" "$dir/user.jar" '{"scope":"openid"}'; }; then
        _gl_kill "$_GL_PID" "$dir"; _gl_fail "provisioning through the admin API"; return 2
    fi
    rm -f "$dir/admin.jar"
    _gl_kill "$_GL_PID" "$dir"

    # 2. The measured start: everything loaded from the database; ready = discovery answers 200.
    local discovery="$issuer/.well-known/openid-configuration" start_ns ready_ms
    start_ns=$(_gl_now_ns)
    _gl_launch "$dir"
    _gl_wait "$discovery" "$dir" || { _gl_kill "$_GL_PID" "$dir"; return 2; }
    ready_ms=$(( ($(_gl_now_ns) - start_ns) / 1000000 ))

    local endpoints
    endpoints=$(curl -s "$discovery" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["token_endpoint"], d["jwks_uri"], d["authorization_endpoint"])') ||
        { _gl_kill "$_GL_PID" "$dir"; _gl_fail "unreadable discovery document"; return 2; }
    local token_url jwks_url authorize_url
    read -r token_url jwks_url authorize_url <<<"$endpoints"

    {
        echo "GLEWLWYD_PID=$_GL_PID"
        echo "GLEWLWYD_DIR=$dir"
        echo "GLEWLWYD_BASE=$_GL_BASE"
        echo "GLEWLWYD_ISSUER=$issuer"
        echo "GLEWLWYD_DISCOVERY=$discovery"
        echo "GLEWLWYD_JWKS=$jwks_url"
        echo "GLEWLWYD_TOKEN=$token_url"
        echo "GLEWLWYD_AUTHORIZE=$authorize_url"
        echo "GLEWLWYD_CC_ID=$cc_id"
        echo "GLEWLWYD_CC_SECRET=$cc_secret"
        echo "GLEWLWYD_CC_SCOPE=api"
        echo "GLEWLWYD_CC_BASIC=$(printf '%s:%s' "$cc_id" "$cc_secret" | base64 -w0)"
        echo "GLEWLWYD_APP_ID=$app_id"
        echo "GLEWLWYD_APP_SECRET=$app_secret"
        echo "GLEWLWYD_APP_BASIC=$(printf '%s:%s' "$app_id" "$app_secret" | base64 -w0)"
        echo "GLEWLWYD_REDIRECT_URI=$redirect"
        echo "GLEWLWYD_USER=$user"
        echo "GLEWLWYD_USER_PASSWORD=$user_password"
        echo "GLEWLWYD_DB=$dir/glewlwyd.sqlite3"
        echo "GLEWLWYD_DB_FS=$(stat -f -c %T "$dir" 2>/dev/null || echo unknown)"
        echo "GLEWLWYD_LOG=$dir/glewlwyd.log"
        echo "GLEWLWYD_READY_MS=$ready_ms"
        echo "GLEWLWYD_VERSION=$(glewlwyd --version 2>/dev/null | head -n 1)"
    } >"$dir/glewlwyd.env"
    # Values are URLs, hex, base64, paths and digits: safe to source.
    # shellcheck disable=SC1091
    . "$dir/glewlwyd.env"
    export GLEWLWYD_PID GLEWLWYD_DIR GLEWLWYD_DISCOVERY GLEWLWYD_JWKS GLEWLWYD_TOKEN GLEWLWYD_CC_ID GLEWLWYD_CC_SECRET GLEWLWYD_CC_SCOPE
    cat "$dir/glewlwyd.env"
}

_gl_load_env() {
    local dir=${1:-}
    [ -n "$dir" ] && [ -r "$dir/glewlwyd.env" ] || { _gl_fail "no $dir/glewlwyd.env: run start first"; return 2; }
    # shellcheck disable=SC1091
    . "$dir/glewlwyd.env"
    _GL_BASE=$GLEWLWYD_BASE
}

# glewlwyd_refresh_tokens DIR N: N refresh tokens of the user-flow client, one per line, each from its own
# authorization code (so each starts its own chain). The user's session cookie (DIR/user.jar) skips the
# login; glewlwyd's /auth always sends the browser to its login page first unless the query carries
# `g_continue` (its login page adds it), so the request below carries it.
glewlwyd_refresh_tokens() {
    local dir=${1:-} n=${2:-1} i loc code body token relogin
    _gl_load_env "$dir" || return 2
    local redirect_enc; redirect_enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$GLEWLWYD_REDIRECT_URI")
    for i in $(seq 1 "$n"); do
        for relogin in 0 1; do
            loc=$(curl -s -o /dev/null -b "$dir/user.jar" -c "$dir/user.jar" -w '%{redirect_url}' \
                "$GLEWLWYD_AUTHORIZE?response_type=code&client_id=$GLEWLWYD_APP_ID&redirect_uri=$redirect_enc&scope=openid&state=s$i&nonce=n$i$RANDOM&g_continue" || true)
            code=$(printf '%s' "$loc" | sed -n 's/.*[?&]code=\([^&]*\).*/\1/p')
            [ -n "$code" ] && break
            [ "$relogin" = 0 ] || { _gl_fail "no code from /auth (redirected to: ${loc:-nothing})"; return 2; }
            _gl_api POST /auth/ "$dir/user.jar" "$(python3 -c 'import json, sys; print(json.dumps({"username": sys.argv[1], "password": sys.argv[2]}))' "$GLEWLWYD_USER" "$GLEWLWYD_USER_PASSWORD")" || return 2
        done
        body=$(curl -s -u "$GLEWLWYD_APP_ID:$GLEWLWYD_APP_SECRET" --data-urlencode grant_type=authorization_code \
            --data-urlencode "code=$code" --data-urlencode "redirect_uri=$GLEWLWYD_REDIRECT_URI" "$GLEWLWYD_TOKEN" || true)
        token=$(printf '%s' "$body" | python3 -c 'import json, sys; print(json.load(sys.stdin)["refresh_token"])' 2>/dev/null) ||
            { _gl_fail "code exchange gave no refresh_token: $(printf '%s' "$body" | head -c 300)"; return 2; }
        printf '%s\n' "$token"
    done
}

# glewlwyd_check DIR: the by-hand checks, scripted.
glewlwyd_check() {
    local dir=${1:-} tmp status
    _gl_load_env "$dir" || return 2
    tmp=$(mktemp -d)
    status=$(curl -s -o "$tmp/discovery.json" -w '%{http_code}' "$GLEWLWYD_DISCOVERY" || true)
    [ "$status" = 200 ] || { rm -rf "$tmp"; _gl_fail "discovery answered $status"; return 2; }
    echo "discovery: 200 $(wc -c <"$tmp/discovery.json") bytes"
    status=$(curl -s -o "$tmp/jwks.json" -w '%{http_code}' "$GLEWLWYD_JWKS" || true)
    [ "$status" = 200 ] || { rm -rf "$tmp"; _gl_fail "JWKS answered $status"; return 2; }
    status=$(curl -s -o "$tmp/cc.json" -w '%{http_code}' -u "$GLEWLWYD_CC_ID:$GLEWLWYD_CC_SECRET" \
        -d "grant_type=client_credentials&scope=$GLEWLWYD_CC_SCOPE" "$GLEWLWYD_TOKEN" || true)
    [ "$status" = 200 ] || { _gl_fail "client_credentials answered $status: $(head -c 300 "$tmp/cc.json")"; rm -rf "$tmp"; return 2; }
    # The JWKS key must be the public key generated for the instance; the access token must be a JWT
    # signed RS256 with it (verified by openssl over header.payload).
    if ! python3 - "$tmp" "$dir/pub.pem" <<'EOF'
import base64, json, subprocess, sys
tmp, pub = sys.argv[1], sys.argv[2]
def b64(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
keys = json.load(open(tmp + "/jwks.json"))["keys"]
print("JWKS: 200,", ", ".join("%s %s %d bits kid %s" % (k.get("kty"), k.get("alg"), len(b64(k["n"]).lstrip(b"\0")) * 8, k.get("kid")) for k in keys))
rsa = [k for k in keys if k.get("kty") == "RSA" and k.get("alg") == "RS256"]
assert rsa, "no RS256 RSA key in the JWKS"
modulus = subprocess.run(["openssl", "rsa", "-pubin", "-in", pub, "-noout", "-modulus"], capture_output=True, text=True, check=True).stdout
assert int(modulus.strip().split("=")[1], 16) == int.from_bytes(b64(rsa[0]["n"]), "big"), "JWKS modulus differs from the generated key"
answer = json.load(open(tmp + "/cc.json"))
head, payload, sig = answer["access_token"].split(".")
header, claims = json.loads(b64(head)), json.loads(b64(payload))
print("client_credentials: 200, token_type %s, expires_in %s, scope %s" % (answer["token_type"], answer["expires_in"], answer["scope"]))
print("access token header:", json.dumps(header))
print("access token claims:", json.dumps(claims))
assert header["alg"] == "RS256" and header.get("kid") == rsa[0]["kid"], "not RS256 with the JWKS key"
open(tmp + "/signed", "wb").write((head + "." + payload).encode())
open(tmp + "/sig", "wb").write(b64(sig))
v = subprocess.run(["openssl", "dgst", "-sha256", "-verify", pub, "-signature", tmp + "/sig", tmp + "/signed"], capture_output=True, text=True)
print("signature (openssl dgst -sha256 -verify):", v.stdout.strip() or v.stderr.strip())
assert v.returncode == 0, "signature does not verify"
EOF
    then rm -rf "$tmp"; _gl_fail "token or JWKS check"; return 2; fi
    local rt
    rt=$(glewlwyd_refresh_tokens "$dir" 1) || { rm -rf "$tmp"; return 2; }
    status=$(curl -s -o "$tmp/rt.json" -w '%{http_code}' -u "$GLEWLWYD_APP_ID:$GLEWLWYD_APP_SECRET" \
        --data-urlencode grant_type=refresh_token --data-urlencode "refresh_token=$rt" "$GLEWLWYD_TOKEN" || true)
    [ "$status" = 200 ] && grep -q '"refresh_token"' "$tmp/rt.json" ||
        { _gl_fail "refresh answered $status: $(head -c 300 "$tmp/rt.json")"; rm -rf "$tmp"; return 2; }
    echo "refresh_token: 200 with a new refresh_token ($(python3 -c 'import json, sys; print(", ".join(sorted(json.load(open(sys.argv[1])))))' "$tmp/rt.json"))"
    status=$(curl -s -o /dev/null -w '%{http_code}' -u "$GLEWLWYD_APP_ID:$GLEWLWYD_APP_SECRET" \
        --data-urlencode grant_type=refresh_token --data-urlencode "refresh_token=$rt" "$GLEWLWYD_TOKEN" || true)
    echo "the same refresh token again: $status (expected 400: used)"
    rm -rf "$tmp"
    [ "$status" = 400 ] || { _gl_fail "a used refresh token was not refused"; return 2; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -uo pipefail
    case "${1:-start}" in
        start) [ $# -gt 0 ] && shift; glewlwyd_start "$@"; exit $? ;;
        stop) shift; glewlwyd_stop "$@"; exit $? ;;
        refresh-tokens) shift; glewlwyd_refresh_tokens "$@"; exit $? ;;
        check) shift; glewlwyd_check "$@"; exit $? ;;
        -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) if [[ "$1" == */* || -d "$1" ]]; then glewlwyd_start "$@"; exit $?; fi  # start's DIR given first
           _gl_say "unknown command $1 (start, stop, refresh-tokens, check; -h for help)"; exit 2 ;;
    esac
fi
