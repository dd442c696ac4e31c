"""Settings as an operator gives them (issue 13: one declaration per setting): flags read
from the one table, the same values as their environment variables, and clear refusals for
a flag that does not exist, a secret on the command line, or a missing value."""

from __future__ import annotations

import subprocess

import requests

from e2e_support import CLI, TesseraServer

SECRET = "settings-client-secret-0123456789-abcdefgh"


def _serve(binary: str, workdir, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "serve", "--database", str(workdir / "settings-refused.sqlite"), *args],
                          cwd=workdir, capture_output=True, text=True, timeout=60)


def test_a_flag_from_the_table_sets_what_its_variable_sets(binary, workdir):
    database = workdir / "settings.sqlite"
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
    listed = subprocess.run([binary, "settings"], capture_output=True, text=True, timeout=30).stdout
    table = subprocess.run([binary, "settings", "--markdown"], capture_output=True, text=True, timeout=30).stdout
    names = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    assert len(names) >= 40 and "trusted-proxy" in names
    for name in names:
        if name == "master-key":
            assert "TESSERA_MASTER_KEY (no flag" in help_text
        else:
            assert f"--{name}" in help_text and f"--{name}" in listed, name
