#!/usr/bin/env bash
# Black-box end-to-end tests: the real `tessera serve` driven by an independent
# OIDC client (Authlib), raw HTTP (requests) and a real browser (Selenium +
# headless Chromium). Installs what it needs, idempotently, then runs pytest.
#
# Called from the repository root by scripts/test. Env:
#   TESSERA_BIN       the binary to test (default Server/.build/release/tessera: scripts/build-release)
#   E2E_PYTEST_ARGS   extra pytest arguments (e.g. "-k logout -x")
#   E2E_ARTIFACTS     where screenshots go (default e2e-artifacts)
# Two runs may start at once (the SQLite and PostgreSQL suites side by side, by hand): the first
# installs what is missing while the other waits for it.
set -euo pipefail
cd "$(dirname "$0")/../.."

export TESSERA_BIN="${TESSERA_BIN:-Server/.build/release/tessera}"
case "$TESSERA_BIN" in /*) ;; *) TESSERA_BIN="$PWD/$TESSERA_BIN" ;; esac
if [ ! -x "$TESSERA_BIN" ]; then
    echo "e2e: no executable at $TESSERA_BIN (build first, or set TESSERA_BIN)" >&2
    exit 1
fi

mkdir -p .build
exec 9>.build/e2e-install.lock
flock 9

# --- Chromium and its driver (Debian packages) -------------------------------
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    echo "e2e: installing chromium and chromium-driver" >&2
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/dev/null
fi

# --- Python virtual environment ----------------------------------------------
VENV=.build/e2e-venv
PACKAGES="authlib requests selenium pytest cryptography aiosmtpd schemathesis bcrypt argon2-cffi"
STAMP="$VENV/.e2e-packages"
if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p .build
    if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
        # Debian's own python3 needs python3-venv for ensurepip.
        rm -rf "$VENV"
        SUDO=""
        if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
        export DEBIAN_FRONTEND=noninteractive
        $SUDO apt-get update -qq >/dev/null
        $SUDO apt-get install -y -qq python3-venv >/dev/null
        python3 -m venv "$VENV"
    fi
fi
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$PACKAGES" ]; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check $PACKAGES
    echo "$PACKAGES" >"$STAMP"
fi

exec 9>&-
mkdir -p "${E2E_ARTIFACTS:-e2e-artifacts}"

# shellcheck disable=SC2086
set +e
"$VENV/bin/python" -m pytest Tests/e2e -q -p no:cacheprovider --durations=12 ${E2E_PYTEST_ARGS:-}
status=$?
set -e
exit $status
