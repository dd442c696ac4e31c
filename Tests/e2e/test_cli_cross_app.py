"""App-to-app sign-in between two running processes (docs/cross-app.md): `tessera login
--authenticator` is the partner app (it pushes its request and waits on its loopback redirect),
`tessera login --approve LINK` is the operator's authenticator app (signed in earlier, it approves
with its own session and opens the partner's redirect). Both go through the SDK. When no
authenticator app takes the link, headless Chromium opens it: the hosted page is the fallback."""

import json
import subprocess

import pytest
import requests
from selenium.webdriver.support.ui import WebDriverWait

from conftest import PASSWORD
from e2e_support import random_token
from test_browser import click_decision, driver, sign_in, wait_title  # noqa: F401  (driver is a fixture)
from test_cli_login import LoginProcess


@pytest.fixture(scope="module")
def apps(cli):
    loopback = dict(redirect_uris=["http://127.0.0.1/callback"], public=True)
    user = cli.add_user(f"operator-{random_token(6).lower()}@example.com", PASSWORD, "Olga Operator")
    return {
        "authenticator": cli.add_client("Operator App", first_party=True, authenticator=True, **loopback)["client_id"],
        "partner": cli.add_client("Partner Cinema", **loopback)["client_id"],
        "sibling": cli.add_client("Operator Travel", first_party=True, **loopback)["client_id"],
        "user": user,
    }


def run(binary, *args, input=None, timeout=60):
    return subprocess.run([binary, "login", *args], capture_output=True, text=True, input=input, timeout=timeout)


@pytest.fixture(scope="module")
def authenticator_session(binary, op, apps, tmp_path_factory):
    """The authenticator app, signed in once through the native API; its tokens in a file."""
    token_file = tmp_path_factory.mktemp("authenticator") / "tokens.json"
    done = run(binary, "--issuer", op.issuer, f"--client-id={apps['authenticator']}", "--native", "--email",
               apps["user"]["email"], "--password-stdin", "--token-file", str(token_file), input=PASSWORD + "\n")
    assert done.returncode == 0, done.stderr
    return token_file


class PartnerLogin(LoginProcess):
    """`tessera login --authenticator`: the link it prints is the pushed request's."""

    def __init__(self, binary, issuer, client_id, token_file, *extra):
        self.process = subprocess.Popen(
            [binary, "login", "--issuer", issuer, f"--client-id={client_id}", "--timeout", "60", "--token-file",
             str(token_file), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._start_reader()


def approve(binary, op, apps, session, link, *extra):
    return run(binary, "--issuer", op.issuer, f"--client-id={apps['authenticator']}", "--token-file", str(session),
               "--approve", link, *extra)


def test_the_authenticator_app_approves_a_partner_sign_in(binary, op, apps, authenticator_session, tmp_path):
    partner = PartnerLogin(binary, op.issuer, apps["partner"], tmp_path / "partner.json", "--authenticator")
    assert partner.url_seen.wait(30), "".join(partner.stderr_lines)
    assert "request_uri=urn%3Aietf%3Aparams%3Aoauth%3Arequest_uri%3A" in partner.url
    assert "code_challenge" not in partner.url and "state=" not in partner.url  # all of it was pushed
    approved = approve(binary, op, apps, authenticator_session, partner.url)
    assert approved.returncode == 0, approved.stderr
    assert "Partner Cinema asks to sign in " + apps["user"]["email"] in approved.stderr
    assert approved.stdout.strip().startswith("http://127.0.0.1:") and "code=" in approved.stdout
    status, stdout, stderr = partner.finish()
    assert status == 0, stderr
    claims = json.loads(stdout)
    assert claims["sub"] == apps["user"]["id"] and claims["iss"] == op.issuer and claims["aud"] == apps["partner"]
    # Once: the same link can't be approved again.
    again = approve(binary, op, apps, authenticator_session, partner.url)
    assert again.returncode == 1 and "invalid_request_uri" in again.stderr


def test_a_denial_in_the_authenticator_app_reaches_the_partner(binary, op, apps, authenticator_session, tmp_path):
    partner = PartnerLogin(binary, op.issuer, apps["partner"], tmp_path / "partner.json", "--authenticator")
    assert partner.url_seen.wait(30), "".join(partner.stderr_lines)
    denied = approve(binary, op, apps, authenticator_session, partner.url, "--deny")
    assert denied.returncode == 0, denied.stderr
    assert "error=access_denied" in denied.stdout
    status, stdout, stderr = partner.finish()
    assert status == 1 and stdout == "" and "access_denied" in stderr


def test_without_the_authenticator_app_the_link_opens_the_hosted_login(binary, op, apps, driver, artifacts, tmp_path):
    """The web fallback: the same link in a browser is the provider's sign-in page, then consent."""
    partner = PartnerLogin(binary, op.issuer, apps["partner"], tmp_path / "partner.json", "--authenticator")
    assert partner.url_seen.wait(30), "".join(partner.stderr_lines)
    driver.delete_all_cookies()
    driver.get(partner.url)
    wait_title(driver, "Sign in")
    assert "Partner Cinema" in driver.page_source
    driver.save_screenshot(str(artifacts / "cross-app-web-fallback.png"))
    user = type("U", (), {"email": apps["user"]["email"], "password": PASSWORD})
    sign_in(driver, user)
    # The approval in an earlier test recorded consent to this partner; the page asks only if not.
    WebDriverWait(driver, 30).until(lambda d: d.title.startswith("Allow access?") or d.current_url.startswith("http://127.0.0.1:"))
    if driver.title.startswith("Allow access?"):
        click_decision(driver, "allow")
    status, stdout, stderr = partner.finish()
    assert status == 0, stderr
    assert json.loads(stdout)["sub"] == apps["user"]["id"]


def test_a_person_arriving_from_the_authenticator_app_is_signed_in_without_a_page(binary, op, apps, authenticator_session,
                                                                                  tmp_path):
    made = run(binary, "--issuer", op.issuer, f"--client-id={apps['authenticator']}", "--token-file", str(authenticator_session),
               "--handoff-for", apps["sibling"], "--app-link", "com.example.travel:/welcome")
    assert made.returncode == 0, made.stderr
    deep_link = made.stdout.strip()
    assert deep_link.startswith("com.example.travel:/welcome?handoff_ticket=")
    sibling = PartnerLogin(binary, op.issuer, apps["sibling"], tmp_path / "sibling.json", "--no-browser",
                           "--handoff-link", deep_link)
    assert sibling.url_seen.wait(30), "".join(sibling.stderr_lines)
    assert "handoff_ticket=" in sibling.url
    # What the system browser would do with the URL: one redirect, straight back to the app.
    answer = requests.get(sibling.url, timeout=30)
    assert answer.status_code == 200
    assert [r.status_code for r in answer.history] == [302]
    assert answer.url.startswith("http://127.0.0.1:") and "code=" in answer.url
    status, stdout, stderr = sibling.finish()
    assert status == 0, stderr
    assert json.loads(stdout)["sub"] == apps["user"]["id"]


def test_sibling_apps_share_one_sign_in_and_one_sign_out(binary, op, cli, apps, tmp_path):
    """Native SSO between two processes: the first signs in (natively, asking for device_sso) and
    leaves the device session in a file standing for the vendor's keychain group; the second signs
    in from it without any page; ending it signs both out."""
    common = dict(redirect_uris=["http://127.0.0.1/callback"], public=True, first_party=True, device_sso_group="acme-cli",
                  scopes=["openid", "profile", "email", "offline_access", "device_sso"])
    mail = cli.add_client("Acme Mail CLI", **common)["client_id"]
    calendar = cli.add_client("Acme Calendar CLI", **common)["client_id"]
    group_file = tmp_path / "keychain-group.json"
    first = run(binary, "--issuer", op.issuer, f"--client-id={mail}", "--native", "--email", apps["user"]["email"],
                "--password-stdin", "--scope", "openid profile email offline_access device_sso", "--share-device-session",
                str(group_file), "--token-file", str(tmp_path / "mail.json"), input=PASSWORD + "\n")
    assert first.returncode == 0, first.stderr
    shared = json.loads(group_file.read_text())
    assert shared["device_secret"] and shared["id_token"] and "refresh_token" not in shared and shared["access_token"] == ""
    assert oct(group_file.stat().st_mode & 0o777) == "0o600"
    saved = group_file.read_text()

    second = run(binary, "--issuer", op.issuer, f"--client-id={calendar}", "--from-device-session", str(group_file),
                 "--token-file", str(tmp_path / "calendar.json"))
    assert second.returncode == 0, second.stderr
    claims = json.loads(second.stdout)
    assert claims["sub"] == apps["user"]["id"] and claims["aud"] == calendar
    assert claims["sid"] == json.loads(first.stdout)["sid"]

    ended = run(binary, "--issuer", op.issuer, f"--client-id={calendar}", "--end-device-session", str(group_file))
    assert ended.returncode == 0, ended.stderr
    assert not group_file.exists()
    copy = tmp_path / "copy.json"
    copy.write_text(saved)
    again = run(binary, "--issuer", op.issuer, f"--client-id={calendar}", "--from-device-session", str(copy),
                "--token-file", str(tmp_path / "calendar2.json"))
    assert again.returncode == 1 and "invalid_grant" in again.stderr
    calendar_tokens = json.loads((tmp_path / "calendar.json").read_text())
    refreshed = requests.post(op.config["token_endpoint"], timeout=30, data={
        "grant_type": "refresh_token", "refresh_token": calendar_tokens["refresh_token"], "client_id": calendar})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"
