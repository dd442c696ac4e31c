"""`tessera login --native --email ADDRESS`: the SDK's native sign-in run for real from a
terminal. Without a password the server emails a code, the command prompts for it on standard
error and reads it from standard input — here the code is read from the server's `/dev/outbox`
and piped in. With `--password-stdin` the password comes from standard input.

Its own `tessera serve --dev` (for `/dev/outbox`; no SMTP, so the emails stay in the outbox),
on its own database."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import time

import pytest
import requests

from e2e_support import new_database, CLI, TesseraServer

PASSWORD = "a long and unusual passphrase"
SERVER_ENV = {"TESSERA_DEV": "true", "TESSERA_LOG_LEVEL": "info", "TESSERA_LOGIN_FAILURES_PER_ADDRESS": "1000",
              "TESSERA_FLOWS_PER_ADDRESS": "100000", "TESSERA_HASHING_PER_ADDRESS": "100000",
              "TESSERA_OTP_PER_ADDRESS_PER_HOUR": "100000", "TESSERA_OTP_PER_EMAIL_PER_HOUR": "1000"}
CODE = re.compile(r"\b(\d{8})\b")


@pytest.fixture(scope="module")
def dev_server(binary, workdir):
    srv = TesseraServer(binary, new_database(workdir, "native-login"), workdir, env=SERVER_ENV, name="native-login").start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def native_setup(binary, workdir, dev_server):
    """A public first-party client (the native API is for first-party apps) and a user with a password."""
    cli = CLI(binary, dev_server.database, workdir)
    client = cli.add_client("Native terminal", public=True, first_party=True, redirect_uris=["http://127.0.0.1/callback"],
                            scopes=["openid", "profile", "email", "offline_access"])
    user = cli.add_user("terminal-user@example.com", PASSWORD, "Terminal User")
    return client["client_id"], user


def outbox_ids(issuer: str, email: str) -> set[str]:
    response = requests.get(issuer + "/dev/outbox", params={"to": email}, timeout=10)
    assert response.status_code == 200, response.text
    return {message["id"] for message in response.json()}


def wait_for_code(issuer: str, email: str, seen: set[str], process: subprocess.Popen, timeout: float = 30) -> str:
    """The code in the first email to `email` not in `seen`, once it is in the outbox."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = requests.get(issuer + "/dev/outbox", params={"to": email}, timeout=10)
        for message in response.json():
            if message["id"] not in seen:
                match = CODE.search(message["text"])
                assert match, message["text"]
                return match.group(1)
        assert process.poll() is None, f"tessera login exited early: {process.communicate()}"
        time.sleep(0.2)
    raise AssertionError(f"no code for {email} in the outbox within {timeout} s")


def native_login(binary: str, issuer: str, client_id: str, email: str, token_file, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [binary, "login", "--native", "--issuer", issuer, "--client-id", client_id, "--email", email,
         "--token-file", str(token_file), *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_native_login_by_code_reads_the_code_from_stdin_and_prints_the_claims(binary, dev_server, native_setup, tmp_path):
    client_id, user = native_setup
    token_file = tmp_path / "config" / "tokens.json"
    seen = outbox_ids(dev_server.issuer, user["email"])
    login = native_login(binary, dev_server.issuer, client_id, user["email"], token_file)
    code = wait_for_code(dev_server.issuer, user["email"], seen, login)
    stdout, stderr = login.communicate(code + "\n", timeout=60)
    assert login.returncode == 0, stderr

    claims = json.loads(stdout)
    assert claims["sub"] == user["id"] and claims["email"] == user["email"] and claims["iss"] == dev_server.issuer
    assert claims["aud"] == client_id and claims["amr"] == ["otp"]
    # The prompt names the address masked, as the server labels it.
    prompt = re.search(r"Code sent to (\S+): ", stderr)
    assert prompt, stderr
    assert "***" in prompt.group(1) and user["email"] not in prompt.group(1)
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(token_file.parent).st_mode) == 0o700
    saved = json.loads(token_file.read_text())
    assert saved["refresh_token"] and saved["client_id"] == client_id and saved["issuer"] == dev_server.issuer


def test_native_login_with_a_wrong_code_exits_1_with_the_servers_error(binary, dev_server, native_setup, tmp_path):
    client_id, user = native_setup
    token_file = tmp_path / "tokens.json"
    seen = outbox_ids(dev_server.issuer, user["email"])
    login = native_login(binary, dev_server.issuer, client_id, user["email"], token_file)
    code = wait_for_code(dev_server.issuer, user["email"], seen, login)
    wrong = "00000000" if code != "00000000" else "11111111"
    stdout, stderr = login.communicate(wrong + "\n", timeout=60)
    assert login.returncode == 1, stderr
    assert stdout == ""
    assert "invalid_grant" in stderr and "invalid_oob_value" in stderr
    assert not token_file.exists()


def test_native_login_retypes_a_wrong_code(binary, dev_server, native_setup, tmp_path):
    client_id, user = native_setup
    seen = outbox_ids(dev_server.issuer, user["email"])
    login = native_login(binary, dev_server.issuer, client_id, user["email"], tmp_path / "tokens.json")
    code = wait_for_code(dev_server.issuer, user["email"], seen, login)
    wrong = "00000000" if code != "00000000" else "11111111"
    stdout, stderr = login.communicate(f"{wrong}\n{code}\n", timeout=60)
    assert login.returncode == 0, stderr
    assert json.loads(stdout)["sub"] == user["id"]
    assert stderr.count("Code sent to ") == 2 and "invalid_oob_value" in stderr


def test_native_login_with_password_stdin(binary, dev_server, native_setup, tmp_path):
    client_id, user = native_setup
    token_file = tmp_path / "tokens.json"
    done = subprocess.run(
        [binary, "login", "--native", "--issuer", dev_server.issuer, "--client-id", client_id, "--email", user["email"],
         "--password-stdin", "--token-file", str(token_file)],
        input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    claims = json.loads(done.stdout)
    assert claims["sub"] == user["id"] and claims["amr"] == ["pwd"]
    assert "Code sent to" not in done.stderr
    assert json.loads(token_file.read_text())["refresh_token"]

    wrong = subprocess.run(
        [binary, "login", "--native", "--issuer", dev_server.issuer, "--client-id", client_id, "--email", user["email"],
         "--password-stdin", "--token-file", str(tmp_path / "other.json")],
        input="not the password\n", capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 1 and wrong.stdout == ""
    assert "invalid_grant" in wrong.stderr
    assert not (tmp_path / "other.json").exists()


def test_native_needs_an_email(binary, dev_server, native_setup):
    client_id, _ = native_setup
    done = subprocess.run([binary, "login", "--native", "--issuer", dev_server.issuer, "--client-id", client_id],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "--native needs --email" in done.stderr
