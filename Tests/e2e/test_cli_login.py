"""`tessera login --no-browser`: the SDK's loopback sign-in (RFC 8252) run for real from a
terminal, with headless Chromium playing the user's browser."""

import json
import os
import stat
import subprocess
import threading

import pytest
from selenium.webdriver.common.by import By

from test_browser import driver, sign_in, wait_title  # noqa: F401  (driver is a fixture)


@pytest.fixture(scope="module")
def login_clients(cli):
    common = dict(redirect_uris=["http://127.0.0.1/callback"], public=True,
                  scopes=["openid", "profile", "email", "offline_access"])
    own = cli.add_client("Terminal", first_party=True, **common)
    third = cli.add_client("Third-party Terminal", **common)
    return own["client_id"], third["client_id"]


class LoginProcess:
    """`tessera login` in the background; collects its output and the URL it prints."""

    def __init__(self, binary, issuer, client_id, token_file):
        self.process = subprocess.Popen(
            [binary, "login", "--issuer", issuer, f"--client-id={client_id}", "--no-browser", "--timeout", "60",
             "--token-file", str(token_file)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._start_reader()

    def _start_reader(self):
        self.stderr_lines = []
        self.url = None
        self.url_seen = threading.Event()
        self.reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.reader.start()

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr_lines.append(line)
            if line.strip().startswith("http") and "/authorize?" in line and self.url is None:
                self.url = line.strip()
                self.url_seen.set()

    def finish(self, timeout=30):
        # Not communicate(): it would read stderr too, racing the reader thread for the last lines.
        stdout = self.process.stdout.read()
        self.process.wait(timeout=timeout)
        self.reader.join(timeout)
        return self.process.returncode, stdout, "".join(self.stderr_lines)


def test_login_signs_in_through_the_browser_and_prints_the_id_token_claims(binary, op, driver, alice, login_clients,
                                                                         tmp_path):
    token_file = tmp_path / "config" / "tokens.json"
    login = LoginProcess(binary, op.issuer, login_clients[0], token_file)
    assert login.url_seen.wait(30), "tessera login printed no URL:\n" + "".join(login.stderr_lines)
    assert login.url.startswith(op.endpoint("authorization_endpoint") + "?")
    assert "code_challenge_method=S256" in login.url and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in login.url

    driver.delete_all_cookies()
    driver.get(login.url)
    wait_title(driver, "Sign in")
    sign_in(driver, alice)
    status, stdout, stderr = login.finish()
    assert status == 0, stderr
    claims = json.loads(stdout)
    assert claims["sub"] == alice.id and claims["email"] == alice.email and claims["iss"] == op.issuer
    # The loopback page the browser lands on says the sign-in is done.
    assert driver.current_url.startswith("http://127.0.0.1:")
    mode = stat.S_IMODE(os.stat(token_file).st_mode)
    assert mode == 0o600, oct(mode)
    assert stat.S_IMODE(os.stat(token_file.parent).st_mode) == 0o700
    saved = json.loads(token_file.read_text())
    assert "refresh_token" in json.dumps(saved)


def test_login_reports_a_denied_consent_and_exits_1(binary, op, driver, alice, login_clients, tmp_path):
    login = LoginProcess(binary, op.issuer, login_clients[1], tmp_path / "tokens.json")
    assert login.url_seen.wait(30), "".join(login.stderr_lines)
    driver.delete_all_cookies()
    driver.get(login.url)
    wait_title(driver, "Sign in")
    sign_in(driver, alice)
    wait_title(driver, "Allow access?")
    driver.find_element(By.CSS_SELECTOR, "form[action='/consent'] button[value='deny']").click()
    status, stdout, stderr = login.finish()
    assert status == 1
    assert stdout == ""
    assert "access_denied" in stderr
    assert not (tmp_path / "tokens.json").exists()
