# A private PostgreSQL cluster for tests and benchmarks: sourced, not run.
#
#   source scripts/postgres-cluster.sh
#   start_test_postgres            # sets TESSERA_TEST_POSTGRES, TESSERA_TEST_POSTGRES_SOCKET and
#                                  # TESSERA_TEST_POSTGRES_CA (the server's TLS certificate, for localhost)
#   new_test_database NAME         # prints a postgres:// URL of a new, empty database
#   stop_test_postgres             # (also on exit, through the caller's trap)
#
# Debian's postgresql is installed when missing. The cluster lives in a folder of its own
# under /tmp, on a free loopback port, owned by the `postgres` user when run as root (initdb
# refuses root); its superuser `tessera` has a random password, asked for over TCP
# (scram-sha-256). fsync is off (the data dies with the test run anyway) unless PG_DURABLE=1.

postgres_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_test_postgres() {
    local bin
    bin=$(postgres_bin)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "installing PostgreSQL from Debian's packages"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q postgresql >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q postgresql >/dev/null; }
        bin=$(postgres_bin)
    fi
    PG_TEST_DIR=$(mktemp -d /tmp/tessera-pg.XXXXXX)
    chmod 755 "$PG_TEST_DIR"
    local password
    password=$(openssl rand -hex 16)
    printf '%s\n' "$password" > "$PG_TEST_DIR/password"
    PG_TEST_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # TLS with a certificate of its own, for localhost only (not for 127.0.0.1): the tests check
    # that verify-full refuses a name the certificate doesn't carry, and verify-ca doesn't care.
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PG_TEST_DIR/server.key" -out "$PG_TEST_DIR/server.crt" -days 2 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost >/dev/null 2>&1
    chmod 600 "$PG_TEST_DIR/server.key"
    if [ "$(id -u)" = 0 ]; then chown -R postgres "$PG_TEST_DIR"; fi
    as_postgres "$bin/initdb" -D "$PG_TEST_DIR/data" -U tessera --pwfile="$PG_TEST_DIR/password" \
        --auth-host=scram-sha-256 --auth-local=trust -E UTF8 --locale=C.UTF-8 >"$PG_TEST_DIR/initdb.log" 2>&1 \
        || { cat "$PG_TEST_DIR/initdb.log" >&2; return 1; }
    local options="-p $PG_TEST_PORT -k $PG_TEST_DIR -c listen_addresses=127.0.0.1 -c max_connections=400"
    options="$options -c ssl=on -c ssl_cert_file=$PG_TEST_DIR/server.crt -c ssl_key_file=$PG_TEST_DIR/server.key"
    # PG_DURABLE=1 (the benchmark): PostgreSQL's own defaults, every commit flushed to disk.
    if [ "${PG_DURABLE:-0}" != 1 ]; then options="$options -c fsync=off -c synchronous_commit=off -c full_page_writes=off"; fi
    as_postgres "$bin/pg_ctl" -D "$PG_TEST_DIR/data" -l "$PG_TEST_DIR/server.log" -w -t 60 -o "$options" \
        start >/dev/null || { cat "$PG_TEST_DIR/server.log" >&2; return 1; }
    PG_TEST_BIN=$bin
    export TESSERA_TEST_POSTGRES="postgres://tessera:$password@127.0.0.1:$PG_TEST_PORT/postgres?sslmode=disable"
    export TESSERA_TEST_POSTGRES_SOCKET="$PG_TEST_DIR"
    export TESSERA_TEST_POSTGRES_CA="$PG_TEST_DIR/server.crt"
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') for the tests on 127.0.0.1:$PG_TEST_PORT (data in $PG_TEST_DIR)"
}

# Creates database $1 and prints its URL.
new_test_database() {
    as_postgres "$PG_TEST_BIN/psql" -q -h "$PG_TEST_DIR" -p "$PG_TEST_PORT" -U tessera -d postgres -c "CREATE DATABASE \"$1\"" >/dev/null
    echo "${TESSERA_TEST_POSTGRES%/postgres?sslmode=disable}/$1?sslmode=disable"
}

stop_test_postgres() {
    if [ -n "${PG_TEST_DIR:-}" ] && [ -d "$PG_TEST_DIR/data" ]; then
        as_postgres "$PG_TEST_BIN/pg_ctl" -D "$PG_TEST_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
        rm -rf "$PG_TEST_DIR"
    fi
}
