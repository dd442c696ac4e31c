"""Settings as an operator gives them (issue 13: one declaration per setting): flags read
from the one table, the same values as their environment variables, and clear refusals for
a flag that does not exist, a secret on the command line, or a missing value."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import time

import pytest
import requests

from e2e_support import POSTGRES, CLI, TesseraServer, free_port, new_database

SECRET = "settings-client-secret-0123456789-abcdefgh"


def _serve(binary: str, workdir, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "serve", "--database", str(new_database(workdir, "settings-refused")), *args],
                          cwd=workdir, capture_output=True, text=True, timeout=60)


def test_a_flag_from_the_table_sets_what_its_variable_sets(binary, workdir):
    database = new_database(workdir, "settings")
    CLI(binary, database, workdir).add_client("Settings API client", client_id="settings-api", secret=SECRET,
                                              scopes=["api"], grant_types=["client_credentials"])
    by_flag = TesseraServer(binary, database, workdir, name="settings-flag",
                            args=["--access-token-lifetime", "7m", "--trusted-proxy", "10.0.0.0/8",
                                  "--trusted-proxy=192.168.0.0/16"]).start()
    try:
        r = requests.post(by_flag.issuer + "/token", data={"grant_type": "client_credentials"},
                          auth=("settings-api", SECRET), timeout=10)
        assert r.status_code == 200, r.text
        assert r.json()["expires_in"] == 420
    finally:
        by_flag.stop()
    by_environment = TesseraServer(binary, database, workdir, name="settings-env",
                                   env={"TESSERA_ACCESS_TOKEN_LIFETIME": "7m"}).start()
    try:
        r = requests.post(by_environment.issuer + "/token", data={"grant_type": "client_credentials"},
                          auth=("settings-api", SECRET), timeout=10)
        assert r.status_code == 200 and r.json()["expires_in"] == 420, r.text
    finally:
        by_environment.stop()


def test_unknown_flags_secrets_and_missing_values_are_refused_with_a_reason(binary, workdir):
    unknown = _serve(binary, workdir, "--acces-token-lifetime", "7m")
    assert unknown.returncode == 64, unknown
    assert "Unknown option '--acces-token-lifetime'" in unknown.stderr and "tessera serve --help" in unknown.stderr
    secret = _serve(binary, workdir, "--master-key", "x" * 44)
    assert secret.returncode == 64, secret
    assert "TESSERA_MASTER_KEY" in secret.stderr, secret.stderr
    missing = _serve(binary, workdir, "--port")
    assert missing.returncode == 64 and "Missing value for '--port'" in missing.stderr, missing.stderr
    bad = _serve(binary, workdir, "--otp-length", "four")
    assert bad.returncode == 2 and "otp-length must be a whole number" in bad.stderr, bad.stderr


def test_help_and_settings_list_every_setting(binary, workdir):
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, timeout=30).stdout
    # `serve` starts without the argument parser; its help flags still reach it.
    short = subprocess.run([binary, "serve", "-h"], capture_output=True, text=True, timeout=30).stdout
    assert short == help_text and "SETTINGS:" in help_text, short
    listed = subprocess.run([binary, "settings"], capture_output=True, text=True, timeout=30).stdout
    table = subprocess.run([binary, "settings", "--markdown"], capture_output=True, text=True, timeout=30).stdout
    names = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    assert len(names) >= 40 and "trusted-proxy" in names
    for name in names:
        if name == "master-key":
            assert "TESSERA_MASTER_KEY (no flag" in help_text
        else:
            assert f"--{name}" in help_text and f"--{name}" in listed, name


def test_a_database_that_cant_be_used_is_told_at_start_without_its_password(binary, workdir):
    """The admin CLI exits 2 at once with the reason; `serve` waits for its database (it may come
    after the node: docs/deployment.md, "Database outages"), saying why in its log, and stops
    cleanly on SIGTERM meanwhile. Neither shows the password."""
    env = {**os.environ, "TESSERA_MASTER_KEY": base64.b64encode(bytes(32)).decode()}
    database = "postgres://tessera:hunter2-secret@127.0.0.1:1/tessera"
    refused = subprocess.run([binary, "users", "list", "--database", database], cwd=workdir, capture_output=True, text=True,
                             timeout=60, env=env)
    assert refused.returncode == 2, refused
    assert "the database postgres://tessera:***@127.0.0.1:1/tessera" in refused.stderr, refused.stderr
    assert "can't connect: 127.0.0.1:1: Connection refused" in refused.stderr, refused.stderr
    assert "hunter2" not in refused.stderr + refused.stdout
    port = free_port()
    waiting = subprocess.Popen([binary, "serve", "--database", database, "--port", str(port)], cwd=workdir, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    def status(path: str) -> int | None:
        try:
            return requests.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code
        except requests.RequestException:
            return None

    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and waiting.poll() is None and status("/health/ready") != 503:
            time.sleep(0.2)
        live, ready = status("/health/live"), status("/health/ready")
        time.sleep(1)  # a second try, logged too
    finally:
        waiting.send_signal(signal.SIGTERM)
        stdout, stderr = waiting.communicate(timeout=30)
    assert (live, ready) == (200, 503), (live, ready, stderr)
    assert waiting.returncode == 0, (waiting.returncode, stderr)
    assert "waiting for the database" in stderr and "reason=can't connect: 127.0.0.1:1: Connection refused" in stderr, stderr
    assert "postgres://tessera:***@127.0.0.1:1/tessera" in stderr and "Tessera is ready" not in stdout, stderr
    assert "hunter2" not in stderr + stdout
    typo = subprocess.run([binary, "serve", "--database", "postgres://tessera:hunter2-secret@db/tessera?sslmode=on"],
                          cwd=workdir, capture_output=True, text=True, timeout=60)
    assert typo.returncode == 2 and "sslmode must be one of disable, prefer, require, verify-ca, verify-full" in typo.stderr, typo
    assert "hunter2" not in typo.stderr + typo.stdout


@pytest.mark.skipif(POSTGRES is None, reason="needs a PostgreSQL server (E2E_POSTGRES)")
def test_postgres_needs_the_master_key_every_node_shares(binary, workdir):
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_MASTER_KEY"}
    refused = subprocess.run([binary, "serve", "--database", str(new_database(workdir, "no-master-key"))],
                             cwd=workdir, capture_output=True, text=True, timeout=60, env=env)
    assert refused.returncode == 2, refused
    assert "set TESSERA_MASTER_KEY to the same key on every node" in refused.stderr, refused.stderr
