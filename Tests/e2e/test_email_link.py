"""Email-link sign-in (issue 5, docs/email-link.md) and the hosted login's sign-in by email
code (the native API's sign-in flow, presented as pages), black-box: the app API
(`/emaillink/v1.0/send` and `/complete`, found by discovery), the hosted login's "Email
me a sign-in link" in headless Chromium on the same device and on another one, the
association files, and seed 004's attacks (a link used by someone else, a squatter's
password on a pre-created account, a replayed link). Every link is read out of the
message a real SMTP server (aiosmtpd) received; ID tokens are verified against the
JWKS with joserfc.

Two servers of this module's own, both sending to one relay: the main one (every request
comes from 127.0.0.1, so the per-address hourly limit is lifted) and one whose links live
3 s, for expiry. Screenshots go to e2e-artifacts/email-link-*.png."""

from __future__ import annotations

import html
import json
import re
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from e2e_support import (new_database, CLI, Client, Provider, TesseraServer, assert_tokens, parse_page, query_url, random_token, s256,
                         screenshot_both, wait_for_next_page)
from smtp_sink import Mail, SMTPSink

APP = "shop-app"
WEB = "web-shop"
WEB_SECRET = "email-link-e2e-web-secret-0123456789-abcdef"
IOS_APP = "ABCDE12345.com.example.shop"
IOS_BUNDLE = "com.example.shop"
ANDROID_PACKAGE = "com.example.shop"
FINGERPRINT = ("14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5")
LINK_DOMAIN = "links.example.com"
CONTINUE_URL = f"https://{LINK_DOMAIN}/finish?cart=42"
SCOPE = "openid profile email offline_access"
VICTIM_PASSWORD = "a squatter's long and unusual passphrase"
SERVER_ENV = {"TESSERA_LOGIN_FAILURES_PER_ADDRESS": "1000", "TESSERA_LOG_LEVEL": "info",
              "TESSERA_FLOWS_PER_ADDRESS": "100000", "TESSERA_HASHING_PER_ADDRESS": "100000",
              # every request comes from 127.0.0.1: the per-address hourly limit must not get in the way
              "TESSERA_OTP_PER_ADDRESS_PER_HOUR": "100000", "TESSERA_OTP_PER_EMAIL_PER_HOUR": "50",
              # the hosted sign-up: a password, then two pages of attributes
              "TESSERA_SIGNUP_PASSWORD": "required",
              "TESSERA_SIGNUP_ATTRIBUTES": json.dumps([
                  {"name": "given_name", "required": True}, {"name": "family_name"},
                  {"name": "city", "required": True, "page": 2, "pattern": "[A-Za-zА-Яа-яЁё -]+"},
                  {"name": "birthdate", "page": 2}])}
ERROR_KEYS = {"error", "error_description", "error_codes", "timestamp", "trace_id", "correlation_id"}
LINK = re.compile(r"https?://[^\s\"'<>]+/emaillink/v1\.0/signin\?[^\s\"'<>]+")


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:12]}@example.com"


# ---------------------------------------------------------------------------
# Servers, relay, clients


@pytest.fixture(scope="module", autouse=True)
def _register_early():
    """Overrides the session's: this module brings its own servers, so the shared server
    and its background registrations are not started for it."""
    yield


def _app_client_args(callback_base: str) -> list[str]:
    # A loopback redirect URI besides the app's own, so a browser can bring the code back to the test.
    return ["clients", "add", "--name", "Shop", "--id", APP, "--public", "--first-party",
            "--redirect-uri", "https://shop.example.com/callback", "--redirect-uri", callback_base + "/shop",
            "--link-domain", LINK_DOMAIN, "--ios-app", IOS_APP, "--android-app", f"{ANDROID_PACKAGE}={FINGERPRINT}", "--json"]


def _start(binary, workdir, sink, name: str, env: dict, first: list[str], rest: list[tuple[list[str], str | None]]):
    """The schema first (the CLI creates it), then the server and the other registrations at once."""
    database = new_database(workdir, name)
    cli = CLI(binary, database, workdir)
    cli.run(*first)
    server = TesseraServer(binary, database, workdir, env={**SERVER_ENV, **env}, name=name, args=["--smtp-url", sink.url])
    with ThreadPoolExecutor(3) as pool:
        started = pool.submit(server.start)
        outputs = [pool.submit(cli.run, *args, input=stdin) for args, stdin in rest]
        started.result()
        return server, cli, [o.result() for o in outputs]


@pytest.fixture(scope="module")
def setup(binary, workdir, sink, callback):
    victim = unique("victim")
    main_rest = [(["clients", "add", "--name", "Web Shop", "--id", WEB, "--secret", WEB_SECRET,
                   "--redirect-uri", callback.base + "/cb", "--json"], None),
                 (["users", "add", victim, "--password-stdin", "--unverified", "--json"], VICTIM_PASSWORD + "\n")]
    with ThreadPoolExecutor(2) as pool:
        main = pool.submit(_start, binary, workdir, sink, "emaillink", {}, _app_client_args(callback.base), main_rest)
        short = pool.submit(_start, binary, workdir, sink, "emaillink-short", {"TESSERA_EMAIL_LINK_LIFETIME": "3"},
                            _app_client_args(callback.base), [])
        (server, cli, _), (short_server, _, _) = main.result(), short.result()
    yield {"server": server, "cli": cli, "short": short_server, "victim": victim}
    server.stop()
    short_server.stop()


@pytest.fixture(scope="module")
def op(setup) -> Provider:
    return Provider(setup["server"].issuer)


@pytest.fixture(scope="module")
def app_client(callback) -> Client:
    return Client(APP, None, ["https://shop.example.com/callback", callback.base + "/shop"],
                  {"token_endpoint_auth_method": "none"})


@pytest.fixture(scope="module")
def web_client(callback) -> Client:
    return Client(WEB, WEB_SECRET, [callback.base + "/cb"], {"token_endpoint_auth_method": "client_secret_basic"})


class App:
    """The first-party app: asks for links, reads them from the mailbox, completes them."""

    def __init__(self, op: Provider, sink: SMTPSink, client: Client):
        self.op, self.sink, self.client = op, sink, client
        self.http = requests.Session()

    def send(self, email: str, **settings) -> requests.Response:
        form = {"client_id": APP, "email": email, **settings}
        return self.http.post(self.op.endpoint("email_link_send_endpoint"), data=form, timeout=30)

    def link(self, email: str, **settings) -> str:
        """Asks for a link and returns the one the email carries."""
        before = len(self.sink.to(email))
        ok(self.send(email, **settings))
        return link_in(self.sink.next_to(email, before))

    def complete(self, email: str, *, code: str | None = None, link: str | None = None, operation: str | None = None,
                 bearer: str | None = None, scope: str = SCOPE) -> requests.Response:
        form = {"client_id": APP, "email": email, "oob_code": code, "link": link, "operation": operation, "scope": scope}
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else None
        return self.http.post(self.op.endpoint("email_link_complete_endpoint"), headers=headers, timeout=30,
                              data={k: v for k, v in form.items() if v is not None})

    def sign_in(self, email: str) -> dict:
        """A whole sign-in by link; returns the token response."""
        return ok(self.complete(email, link=self.link(email)))

    def id_token(self, body: dict) -> dict:
        return self.op.verify_id_token(body["id_token"], self.client, access_token=body["access_token"])

    def userinfo(self, access_token: str) -> dict:
        r = self.op.userinfo(access_token)
        assert r.status_code == 200, f"userinfo: {r.status_code} {r.text[:300]}"
        return r.json()


@pytest.fixture
def app(op, sink, app_client) -> App:
    return App(op, sink, app_client)


def ok(r: requests.Response) -> dict:
    assert r.status_code == 200, f"{r.request.url}: {r.status_code} {r.text[:600]}"
    assert r.headers.get("Content-Type", "").startswith("application/json"), r.headers
    return r.json()


def refused(r: requests.Response, error: str, suberror: str | None = None, status: int = 400) -> dict:
    """The native API's error shape with this error (and suberror), and no token."""
    try:
        body = r.json()
    except ValueError:
        raise AssertionError(f"not JSON ({r.status_code}): {r.text[:300]}")
    assert (r.status_code, body.get("error"), body.get("suberror")) == (status, error, suberror), \
        f"{r.request.url}: expected {status} {error}/{suberror}, got {r.status_code} {body}"
    assert ERROR_KEYS <= body.keys(), body
    for key in ("access_token", "id_token", "refresh_token"):
        assert key not in body
    return body


def link_in(mail: Mail) -> str:
    """The one sign-in link of a message: the same in its text and HTML parts."""
    in_text = set(LINK.findall(mail.text))
    in_html = {html.unescape(found) for found in LINK.findall(mail.html)}
    assert len(in_text) == 1, f"expected one link in the text part: {mail.text!r}"
    assert in_html == in_text, f"the HTML part's link differs: {in_html} vs {in_text}"
    return in_text.pop()


def query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


# ---------------------------------------------------------------------------
# The app API


def test_discovery_names_both_endpoints(op):
    assert op.endpoint("email_link_send_endpoint") == op.issuer + "/emaillink/v1.0/send"
    assert op.endpoint("email_link_complete_endpoint") == op.issuer + "/emaillink/v1.0/complete"


def test_first_link_creates_a_verified_account_and_the_next_signs_in_to_it(app, op):
    email = unique("newcomer")
    sent = ok(app.send(email))
    assert sent == {"email": email, "expires_in": 3600}
    code = query(link_in(app.sink.next_to(email)))["oob_code"]

    first = ok(app.complete(email, code=code))
    assert first["is_new_user"] is True and first["email"] == email
    assert first["token_type"] == "Bearer" and first["refresh_token"], first
    claims = app.id_token(first)
    assert claims["email"] == email and claims["email_verified"] is True
    assert claims["amr"] == ["email"]
    assert app.userinfo(first["access_token"])["email"] == email

    # The second link, completed with the whole URL the app was opened with: the same account.
    second = ok(app.complete(email, link=app.link(email)))
    assert second["is_new_user"] is False and second["email"] == email
    assert app.id_token(second)["sub"] == claims["sub"]


def test_the_wrong_address_is_refused_and_the_link_stays_usable(app):
    email = unique("owner")
    link = app.link(email)
    body = refused(app.complete(unique("interceptor"), link=link), "invalid_grant", "invalid_email")
    assert "access_token" not in body
    done = ok(app.complete(email, link=link))
    assert done["email"] == email and done["is_new_user"] is True


def test_five_wrong_addresses_end_the_link(app):
    email = unique("guessed")
    link = app.link(email)
    for _ in range(5):
        refused(app.complete(unique("guess"), link=link), "invalid_grant", "invalid_email")
    refused(app.complete(email, link=link), "invalid_grant", "invalid_oob_code")


def test_a_link_works_once(app):
    email = unique("replay")
    link = app.link(email)
    ok(app.complete(email, link=link))
    refused(app.complete(email, link=link), "invalid_grant", "invalid_oob_code")
    refused(app.complete(email, code=query(link)["oob_code"]), "invalid_grant", "invalid_oob_code")
    refused(app.complete(email, code=random_token(32)), "invalid_grant", "invalid_oob_code")


def test_an_expired_link_is_refused(setup, sink, app_client):
    short = App(Provider(setup["short"].issuer), sink, app_client)
    email = unique("late")
    sent = ok(short.send(email))
    assert sent["expires_in"] == 3
    link = link_in(sink.next_to(email))
    time.sleep(4)
    refused(short.complete(email, link=link), "invalid_grant", "expired_oob_code")


def test_continue_url_must_be_on_the_clients_domains(app):
    email = unique("continue")
    for foreign in ("https://evil.example.net/finish", f"http://{LINK_DOMAIN}/finish", f"https://{LINK_DOMAIN}.evil.example.net/x",
                    "https://shop.example.com.evil.example.net/x"):
        refused(app.send(email, continue_url=foreign), "invalid_request", "unauthorized_continue_uri")
    refused(app.send(email, handle_code_in_app="true"), "invalid_request")  # where would a browser go?
    assert app.sink.to(email) == [], "a refused send still sent an email"
    ok(app.send(email, continue_url=CONTINUE_URL))
    ok(app.send(email, continue_url="https://shop.example.com/after-sign-in"))


def test_send_answers_alike_for_known_and_unknown_addresses(app, setup):
    known = unique("known")
    app.sign_in(known)
    addresses = (known, setup["victim"], unique("nobody"))
    before = {address: len(app.sink.to(address)) for address in addresses}
    answers = {address: app.send(address) for address in addresses}
    shapes = {(r.status_code, r.headers.get("Content-Type"), tuple(sorted(r.json())), r.json()["expires_in"])
              for r in answers.values()}
    assert len(shapes) == 1, shapes
    for address, r in answers.items():
        assert r.json()["email"] == address
        link_in(app.sink.next_to(address, before[address]))  # every address gets its link


def test_the_email_is_multipart_and_in_russian_with_every_hint(app, op):
    email = unique("russian")
    ok(app.send(email, ui_locales="ru", continue_url=CONTINUE_URL, ios_bundle_id=IOS_BUNDLE,
                android_package_name=ANDROID_PACKAGE, android_install_app="true", android_minimum_version="12"))
    mail = app.sink.next_to(email)
    assert mail.message.get_content_type() == "multipart/alternative", mail.message.get_content_type()
    assert mail.part("text/plain") is not None and mail.part("text/html") is not None
    assert re.match(r"=\?utf-8\?[bq]\?", mail.raw_subject, re.IGNORECASE), mail.raw_subject
    assert "Вход" in mail.subject and mail.raw_subject.isascii()
    assert "Войти" in mail.html and "Откройте" in mail.text

    link = link_in(mail)
    assert link.startswith(op.issuer + "/emaillink/v1.0/signin?"), link
    params = query(link)
    assert params["mode"] == "signIn" and params["client_id"] == APP and params["lang"] == "ru"
    assert re.fullmatch(r"[A-Za-z0-9_-]{43,}", params["oob_code"]), params["oob_code"]
    assert params["continue_url"] == CONTINUE_URL
    assert params["ios_bundle_id"] == IOS_BUNDLE
    assert params["android_package_name"] == ANDROID_PACKAGE
    assert params["android_install_app"] == "true" and params["android_minimum_version"] == "12"
    assert ok(app.complete(email, link=link))["is_new_user"] is True


# ---------------------------------------------------------------------------
# Linking and re-authentication


def test_linking_another_accounts_address_changes_nothing(app):
    alice, bob = unique("alice"), unique("bob")
    signed_in = app.sign_in(alice)
    app.sign_in(bob)
    link = app.link(bob)
    refused(app.complete(bob, link=link, operation="link"), "invalid_token", status=401)  # no access token
    refused(app.complete(bob, link=link, operation="link", bearer=signed_in["access_token"]), "credential_already_in_use")
    assert app.userinfo(signed_in["access_token"])["email"] == alice
    # The link was not used: bob signs in with it, to his own account.
    bobs = ok(app.complete(bob, link=link))
    assert bobs["email"] == bob and bobs["is_new_user"] is False


def test_linking_a_fresh_address_makes_it_the_accounts_email(app):
    old, fresh = unique("before"), unique("after")
    signed_in = app.sign_in(old)
    sub = app.id_token(signed_in)["sub"]
    linked = ok(app.complete(fresh, link=app.link(fresh), operation="link", bearer=signed_in["access_token"]))
    assert linked["email"] == fresh and linked["is_new_user"] is False
    assert app.id_token(linked)["sub"] == sub
    info = app.userinfo(signed_in["access_token"])
    assert info["sub"] == sub and info["email"] == fresh and info["email_verified"] is True
    # The fresh address now signs in to the same account.
    assert app.id_token(app.sign_in(fresh))["sub"] == sub


def test_reauthentication_gives_a_new_auth_time_and_only_to_the_same_user(app):
    email, other = unique("reauth"), unique("someone-else")
    signed_in = app.sign_in(email)
    before = app.id_token(signed_in)
    time.sleep(1.1)
    again = ok(app.complete(email, link=app.link(email), operation="reauthenticate", bearer=signed_in["access_token"]))
    after = app.id_token(again)
    assert after["sub"] == before["sub"] and after["auth_time"] > before["auth_time"], (before, after)
    assert again["is_new_user"] is False

    link = app.link(other)
    refused(app.complete(other, link=link, operation="reauthenticate", bearer=signed_in["access_token"]), "user_mismatch")
    # Unused: its owner signs in with it.
    assert ok(app.complete(other, link=link))["email"] == other


def test_a_link_removes_a_squatters_password_and_revokes_what_was_issued(app, op, setup, app_client):
    victim = setup["victim"]
    native = lambda path, **form: app.http.post(op.issuer + path, data={"client_id": APP, **form}, timeout=30)

    def password_sign_in():
        initiated = ok(native("/oauth2/v2.0/initiate", username=victim, challenge_type="password redirect"))
        challenge = ok(native("/oauth2/v2.0/challenge", continuation_token=initiated["continuation_token"],
                              challenge_type="password redirect"))
        assert challenge["challenge_type"] == "password", challenge
        return native("/oauth2/v2.0/token", continuation_token=challenge["continuation_token"], grant_type="password",
                      password=VICTIM_PASSWORD, scope=SCOPE)

    # The squatter signs in with the password they set on the pre-created account.
    squatter = ok(password_sign_in())
    assert squatter["refresh_token"]
    squatter_sub = app.id_token(squatter)["sub"]

    owner = app.sign_in(victim)
    assert owner["is_new_user"] is False and app.id_token(owner)["sub"] == squatter_sub
    assert app.id_token(owner)["email_verified"] is True

    body = refused(password_sign_in(), "invalid_grant")
    assert 50126 in body["error_codes"], body
    refreshed = op.refresh(app_client, squatter["refresh_token"])
    assert refreshed.status_code == 400 and refreshed.json().get("error") == "invalid_grant", refreshed.text
    assert op.userinfo(squatter["access_token"]).status_code == 401
    # The owner's own tokens are fine.
    assert_tokens(op.refresh(app_client, owner["refresh_token"]))


# ---------------------------------------------------------------------------
# The link in a browser, without one


def test_opening_a_link_does_not_use_it(app, op):
    email = unique("scanner")
    link = app.link(email)
    for _ in range(2):  # a mail scanner, then the user
        page = requests.get(link, timeout=30)
        assert page.status_code == 200 and "text/html" in page.headers["Content-Type"]
        form = parse_page(page.text).form(action="/emaillink/v1.0/signin")
        assert form is not None and form.fields["oob_code"] == query(link)["oob_code"], page.text[:800]
        assert email not in page.text  # no same-device cookie: the address is asked for, not shown

    # Another device: the page wants the address, then signs in and says so.
    browser = requests.Session()
    form = parse_page(browser.get(link, timeout=30).text).form(action="/emaillink/v1.0/signin")
    assert "email" in form.fields
    done = browser.post(urljoin(op.issuer, form.action), data=dict(form.fields, email=email), allow_redirects=False,
                        timeout=30)
    assert done.status_code == 200 and parse_page(done.text).title.startswith("You're signed in"), done.text[:600]
    refused(app.complete(email, link=link), "invalid_grant", "invalid_oob_code")


def test_an_app_link_opened_in_a_browser_goes_to_the_web_fallback(app):
    email = unique("no-app")
    link = app.link(email, continue_url=CONTINUE_URL, handle_code_in_app="true", ios_bundle_id=IOS_BUNDLE)
    answer = requests.get(link, allow_redirects=False, timeout=30)
    assert answer.status_code == 303, (answer.status_code, answer.text[:300])
    location = answer.headers["Location"]
    assert location.startswith("https://links.example.com/finish?"), location
    params = query(location)
    assert params["cart"] == "42" and params["mode"] == "signIn" and params["oob_code"] == query(link)["oob_code"]
    # The web fallback completes it with the code.
    assert ok(app.complete(email, code=params["oob_code"]))["email"] == email


def test_association_files(op, setup):
    # A third-party client's apps open its email links, and nothing more: no saved passwords or
    # passkeys of the issuer (webcredentials, get_login_creds), no claim on all its URLs.
    partner_ios, partner_android = "PARTNER001.com.example.partner", "com.example.partner"
    setup["cli"].add_client("Partner With Apps", redirect_uris=["https://partner.example.com/cb"], public=True,
                   ios_apps=[partner_ios], android_apps=[f"{partner_android}={FINGERPRINT}"])
    apple = requests.get(op.issuer + "/.well-known/apple-app-site-association", timeout=10)
    assert any(partner_ios in d["appIDs"] and [c["/"] for c in d["components"]] == ["/emaillink/*"]
               for d in apple.json()["applinks"]["details"]), apple.text
    assert partner_ios not in apple.json()["webcredentials"]["apps"]
    assert partner_android not in requests.get(op.issuer + "/.well-known/assetlinks.json", timeout=10).text
    assert apple.status_code == 200 and apple.headers["Content-Type"].startswith("application/json")
    details = apple.json()["applinks"]["details"]
    assert any(IOS_APP in d["appIDs"] and {"/": "/emaillink/*"}.items() <= c.items() for d in details for c in d["components"]), \
        details
    assert IOS_APP in apple.json()["webcredentials"]["apps"]

    android = requests.get(op.issuer + "/.well-known/assetlinks.json", timeout=10)
    assert android.status_code == 200 and android.headers["Content-Type"].startswith("application/json")
    targets = [s["target"] for s in android.json() if "delegate_permission/common.handle_all_urls" in s["relation"]]
    assert {"namespace": "android_app", "package_name": ANDROID_PACKAGE, "sha256_cert_fingerprints": [FINGERPRINT]} in targets, \
        targets


# ---------------------------------------------------------------------------
# The hosted login in headless Chromium


@pytest.fixture(scope="module")
def driver():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,1000",
                     "--lang=en-US", "--disable-gpu", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    browser.set_page_load_timeout(60)
    yield browser
    browser.quit()


class Flow:
    """One authorization request made by the browser."""

    def __init__(self, op: Provider, client: Client, redirect_uri: str, scope: str = "openid email"):
        self.client, self.redirect_uri = client, redirect_uri
        self.state, self.nonce, self.verifier = random_token(12), random_token(12), random_token(48)
        self.url = query_url(op.endpoint("authorization_endpoint"), {
            "response_type": "code", "client_id": client.client_id, "redirect_uri": redirect_uri, "scope": scope,
            "state": self.state, "nonce": self.nonce, "code_challenge": s256(self.verifier), "code_challenge_method": "S256"})


def shot(driver, artifacts, name: str) -> None:
    screenshot_both(driver, artifacts / f"email-link-{name}.png")


def wait_title(driver, prefix: str, timeout: float = 20) -> None:
    try:
        WebDriverWait(driver, timeout).until(lambda d: d.title.startswith(prefix))
    except TimeoutException:
        raise AssertionError(f"expected a page titled {prefix!r}, got {driver.title!r} at {driver.current_url}:\n"
                             f"{driver.page_source[:1500]}")


def ask_for_link(driver, artifacts, flow: Flow, email: str, sink: SMTPSink, screenshots: bool) -> str:
    """The login page's "Email me a sign-in link"; returns the link that arrived."""
    before = len(sink.to(email))
    driver.get(flow.url)
    wait_title(driver, "Sign in")
    driver.find_element(By.NAME, "email").send_keys(email)
    button = driver.find_element(By.CSS_SELECTOR, "button[formaction='/login/emaillink']")
    assert button.text == "Email me a sign-in link"
    if screenshots:
        shot(driver, artifacts, "01-login")
    button.click()
    wait_title(driver, "Check your email")
    assert email in driver.find_element(By.TAG_NAME, "body").text
    if screenshots:
        shot(driver, artifacts, "02-check-your-email")
    return link_in(sink.next_to(email, before))


def code_at_callback(callback, driver, flow: Flow):
    record = callback.wait_for(lambda r: r.params.get("state") == flow.state, 15)
    assert record is not None, f"no callback; the browser is at {driver.current_url} ({driver.title!r})"
    return record


def test_browser_same_device_link_resumes_the_authorization_request(op, driver, artifacts, sink, callback, web_client):
    email = unique("same-device")
    flow = Flow(op, web_client, web_client.redirect_uri)
    link = ask_for_link(driver, artifacts, flow, email, sink, screenshots=True)
    device = [c for c in driver.get_cookies() if c["name"] == "tessera_link_device"]
    assert device and device[0]["httpOnly"] and device[0].get("sameSite") == "Lax", driver.get_cookies()

    driver.get(link)
    wait_title(driver, "Sign in")
    body = driver.find_element(By.TAG_NAME, "body").text
    assert f"Continue as {email}" in body, body
    assert not driver.find_elements(By.CSS_SELECTOR, "input[name=email]")  # nothing to type on this device
    shot(driver, artifacts, "03-continue-as")
    driver.find_element(By.CSS_SELECTOR, "form[action='/emaillink/v1.0/signin'] button[type=submit]").click()

    wait_title(driver, "Allow access?")  # a third-party client: consent first
    shot(driver, artifacts, "04-consent")
    driver.find_element(By.CSS_SELECTOR, "form[action='/consent'] button[value='allow']").click()
    record = code_at_callback(callback, driver, flow)
    assert record.path == "/cb" and record.params["iss"] == op.issuer and record.params["code"]
    shot(driver, artifacts, "05-back-at-the-client")
    assert not [c for c in driver.get_cookies() if c["name"] == "tessera_link_device"], "the device cookie outlived its use"

    tokens = assert_tokens(op.redeem_code(web_client, record.params["code"], flow.verifier, flow.redirect_uri))
    claims = op.verify_id_token(tokens["id_token"], web_client, nonce=flow.nonce, access_token=tokens["access_token"])
    assert claims["email"] == email and claims["email_verified"] is True

    driver.get(link)  # used: the page says so and offers nothing to post
    wait_title(driver, "This link can't be used")
    assert not driver.find_elements(By.CSS_SELECTOR, "form[action='/emaillink/v1.0/signin']")
    shot(driver, artifacts, "06-used-link")
    driver.delete_all_cookies()


def test_browser_other_device_asks_for_the_address(op, driver, artifacts, sink, callback, app_client):
    email = unique("other-device")
    flow = Flow(op, app_client, app_client.redirect_uris[1])  # first party: no consent page
    link = ask_for_link(driver, artifacts, flow, email, sink, screenshots=False)
    driver.delete_all_cookies()  # now it is another device

    driver.get(link)
    wait_title(driver, "Confirm your email")
    assert email not in driver.page_source
    shot(driver, artifacts, "07-other-device")
    driver.find_element(By.NAME, "email").send_keys(unique("intruder"))
    driver.find_element(By.CSS_SELECTOR, "form[action='/emaillink/v1.0/signin'] button[type=submit]").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text == "This is not the address the link was sent to."
    shot(driver, artifacts, "08-wrong-address")

    driver.find_element(By.NAME, "email").clear()
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "form[action='/emaillink/v1.0/signin'] button[type=submit]").click()
    record = code_at_callback(callback, driver, flow)
    assert record.path == "/shop" and record.params["code"]
    tokens = assert_tokens(op.redeem_code(app_client, record.params["code"], flow.verifier, flow.redirect_uri))
    assert op.verify_id_token(tokens["id_token"], app_client, nonce=flow.nonce)["email"] == email
    driver.delete_all_cookies()


# ---------------------------------------------------------------------------
# The hosted login's "Email me a code": the sign-in flow of the native API, as pages


def ask_for_code(driver, flow_url: str, email: str, sink: SMTPSink, login_title: str = "Sign in") -> str:
    """Types the address, presses "Email me a code"; returns the code that arrived."""
    before = len(sink.to(email))
    driver.get(flow_url)
    wait_title(driver, login_title)
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "button[formaction='/login/code']").click()
    code = sink.next_to(email, before).code()
    assert code, "no code in the email"
    return code


def type_code(driver, code: str) -> None:
    field = driver.find_element(By.NAME, "code")
    field.clear()
    field.send_keys(code)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login/code/verify'] button[type=submit]:not([formaction])").click()


def test_browser_sign_in_by_code_secures_a_squatted_account(op, driver, artifacts, sink, callback, web_client, setup):
    email = unique("code-victim")
    setup["cli"].run("users", "add", email, "--password-stdin", "--unverified", "--json", input=VICTIM_PASSWORD + "\n")
    flow = Flow(op, web_client, web_client.redirect_uri)
    code = ask_for_code(driver, flow.url, email, sink)
    wait_title(driver, "Enter the code")
    body = driver.find_element(By.TAG_NAME, "body").text
    assert re.search(r"We sent a sign-in code to c\*+\w@e\*{5}e\.com\.", body), body
    assert email not in body  # the address is shown masked
    field = driver.find_element(By.NAME, "code")
    assert field.get_attribute("autocomplete") == "one-time-code" and field.get_attribute("inputmode") == "numeric"
    shot(driver, artifacts, "10-code")

    type_code(driver, "00000000" if code != "00000000" else "11111111")
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text == "The code is not right. Attempts left: 4."
    shot(driver, artifacts, "11-wrong-code")

    type_code(driver, code)
    wait_title(driver, "Allow access?")
    driver.find_element(By.CSS_SELECTOR, "form[action='/consent'] button[value='allow']").click()
    record = code_at_callback(callback, driver, flow)
    tokens = assert_tokens(op.redeem_code(web_client, record.params["code"], flow.verifier, flow.redirect_uri))
    claims = op.verify_id_token(tokens["id_token"], web_client, nonce=flow.nonce, access_token=tokens["access_token"])
    assert claims["email"] == email and claims["email_verified"] is True
    assert claims.get("amr") == ["otp"], claims
    driver.delete_all_cookies()

    # The code proved the address: the password someone else set before is gone.
    again = Flow(op, web_client, web_client.redirect_uri)
    driver.get(again.url)
    wait_title(driver, "Sign in")
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.NAME, "password").send_keys(VICTIM_PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]:not([formaction])").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text == "The email or password is incorrect."
    driver.delete_all_cookies()


def test_browser_code_page_in_russian_and_a_resend_too_soon(op, driver, artifacts, sink, app_client, setup):
    email = unique("code-ru")
    setup["cli"].run("users", "add", email, "--json")
    flow = Flow(op, app_client, app_client.redirect_uris[1])
    ask_for_code(driver, flow.url + "&ui_locales=ru", email, sink, login_title="Вход")
    wait_title(driver, "Введите код")
    assert driver.find_element(By.CSS_SELECTOR, "html").get_attribute("lang") == "ru"
    shot(driver, artifacts, "12-code-ru")
    driver.find_element(By.CSS_SELECTOR, "button[formaction='/login/code/resend']").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text.startswith("Код только что отправлен. Новый можно запросить через")
    shot(driver, artifacts, "13-code-resend-too-soon-ru")
    driver.delete_all_cookies()


# ---------------------------------------------------------------------------
# The hosted login's "Forgot your password?": the native API's reset flow, as pages


def forgot_password(driver, flow_url: str, email: str, login_title: str = "Sign in") -> None:
    driver.get(flow_url)
    wait_title(driver, login_title)
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "button[formaction='/login/reset']").click()


def test_browser_forgot_password_resets_signs_in_and_ends_what_the_old_password_opened(op, driver, artifacts, sink, callback,
                                                                                       web_client, setup):
    old, new = "the old forgotten passphrase", "a brand new memorable passphrase"
    email = unique("forgot")
    setup["cli"].run("users", "add", email, "--password-stdin", "--json", input=old + "\n")
    # A sign-in with the old password, elsewhere: the reset ends what it got.
    earlier = Flow(op, web_client, web_client.redirect_uri, scope="openid email offline_access")
    driver.get(earlier.url)
    wait_title(driver, "Sign in")
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.NAME, "password").send_keys(old)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]:not([formaction])").click()
    wait_title(driver, "Allow access?")
    driver.find_element(By.CSS_SELECTOR, "form[action='/consent'] button[value='allow']").click()
    record = code_at_callback(callback, driver, earlier)
    elsewhere = assert_tokens(op.redeem_code(web_client, record.params["code"], earlier.verifier, earlier.redirect_uri))
    assert "refresh_token" in elsewhere
    driver.delete_all_cookies()

    flow = Flow(op, web_client, web_client.redirect_uri)
    before = len(sink.to(email))
    forgot_password(driver, flow.url, email)
    wait_title(driver, "Reset your password")
    body = driver.find_element(By.TAG_NAME, "body").text
    assert "we sent a code to reset its password to" in body and email not in body, body
    shot(driver, artifacts, "14-reset-code")
    mail = sink.next_to(email, before)
    code = mail.code()
    assert code, mail.text

    field = driver.find_element(By.NAME, "code")
    field.send_keys("00000000" if code != "00000000" else "11111111")
    driver.find_element(By.CSS_SELECTOR, "form[action='/login/reset/verify'] button[type=submit]:not([formaction])").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text == "The code is not right. Attempts left: 4."
    field = driver.find_element(By.NAME, "code")
    field.clear()
    field.send_keys(code)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login/reset/verify'] button[type=submit]:not([formaction])").click()

    wait_title(driver, "Choose a new password")
    password = driver.find_element(By.NAME, "password")
    assert password.get_attribute("autocomplete") == "new-password"
    assert driver.find_element(By.NAME, "username").get_attribute("value") == email  # for the password manager
    shot(driver, artifacts, "15-new-password")
    password.send_keys("password1")
    driver.find_element(By.CSS_SELECTOR, "form[action='/login/reset/password'] button[type=submit]").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text.startswith("This is one of the most common passwords")
    password = driver.find_element(By.NAME, "password")
    assert password.get_attribute("aria-invalid") == "true" and password.get_attribute("value") == ""  # never typed back
    driver.set_window_size(390, 844)
    shot(driver, artifacts, "16-new-password-refused-phone")
    driver.set_window_size(900, 1000)

    password.send_keys(new)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login/reset/password'] button[type=submit]").click()
    record = code_at_callback(callback, driver, flow)  # consent was given at the earlier sign-in
    tokens = assert_tokens(op.redeem_code(web_client, record.params["code"], flow.verifier, flow.redirect_uri))
    claims = op.verify_id_token(tokens["id_token"], web_client, nonce=flow.nonce, access_token=tokens["access_token"])
    assert claims["email"] == email and sorted(claims.get("amr", [])) == ["otp", "pwd"], claims
    assert any(m.subject for m in sink.to(email)[before + 1:]), "no notice that the password changed"
    assert op.refresh(web_client, elsewhere["refresh_token"]).status_code == 400, "the old password's sign-in outlived the reset"
    driver.delete_all_cookies()

    # The old password no longer opens the account; the new one does.
    for typed, works in ((old, False), (new, True)):
        again = Flow(op, web_client, web_client.redirect_uri)
        driver.get(again.url)
        wait_title(driver, "Sign in")
        driver.find_element(By.NAME, "email").send_keys(email)
        driver.find_element(By.NAME, "password").send_keys(typed)
        driver.find_element(By.CSS_SELECTOR, "form button[type=submit]:not([formaction])").click()
        if works:
            code_at_callback(callback, driver, again)
        else:
            WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
            assert driver.find_element(By.ID, "form-error").text == "The email or password is incorrect."
        driver.delete_all_cookies()


def test_browser_forgot_password_for_an_unknown_address_looks_the_same_and_sends_nothing(op, driver, artifacts, sink, app_client):
    email = unique("nobody")
    flow = Flow(op, app_client, app_client.redirect_uris[1])
    forgot_password(driver, flow.url + "&ui_locales=ru", email, login_title="Вход")
    wait_title(driver, "Сброс пароля")
    assert driver.find_element(By.CSS_SELECTOR, "html").get_attribute("lang") == "ru"
    shot(driver, artifacts, "17-reset-code-ru")
    field = driver.find_element(By.NAME, "code")
    field.send_keys("12345678")
    driver.find_element(By.CSS_SELECTOR, "form[action='/login/reset/verify'] button[type=submit]:not([formaction])").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text.startswith("Неверный код"), driver.find_element(By.ID, "form-error").text
    time.sleep(1)
    assert sink.to(email) == [], "a mail went to an address without an account"
    driver.delete_all_cookies()


def test_browser_forgot_password_without_an_address_asks_for_one(op, driver, app_client):
    flow = Flow(op, app_client, app_client.redirect_uris[1])
    forgot_password(driver, flow.url, "")
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.title.startswith("Sign in")
    assert "email" in driver.find_element(By.ID, "form-error").text.lower()
    driver.delete_all_cookies()


# ---------------------------------------------------------------------------
# The hosted sign-up: the native API's sign-up flow, as pages


def type_into(driver, name: str, value: str) -> None:
    field = driver.find_element(By.NAME, name)
    field.clear()
    field.send_keys(value)


def submit(driver, action: str) -> None:
    """Presses the form's button and waits for the page that answers it (the next page may
    have the same title, so waiting for a title alone could read the old one)."""
    button = driver.find_element(By.CSS_SELECTOR, f"form[action='{action}'] button[type=submit]:not([formaction])")
    button.click()
    wait_for_next_page(driver, button)


def field_error(driver, name: str) -> str:
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, f"attribute-{name}-error"))
    field = driver.find_element(By.ID, f"attribute-{name}")
    assert field.get_attribute("aria-invalid") == "true" and field.get_attribute("aria-describedby") == f"attribute-{name}-error"
    return driver.find_element(By.ID, f"attribute-{name}-error").text


def test_browser_sign_up_from_the_login_page_creates_the_account_on_the_last_page(op, driver, artifacts, sink, callback, web_client,
                                                                                 setup):
    email = unique("joiner")
    flow = Flow(op, web_client, web_client.redirect_uri, scope="openid email profile")
    driver.get(flow.url)
    wait_title(driver, "Sign in")
    shot(driver, artifacts, "18-login-with-sign-up")
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "button[formaction='/signup']").click()
    wait_title(driver, "Create your account")
    assert driver.find_element(By.NAME, "email").get_attribute("value") == email  # carried from the login page
    shot(driver, artifacts, "19-sign-up")
    before = len(sink.to(email))
    submit(driver, "/signup")

    wait_title(driver, "Confirm your email")
    shot(driver, artifacts, "20-sign-up-code")
    code = sink.next_to(email, before).code()
    assert code
    type_into(driver, "code", code)
    submit(driver, "/signup/verify")

    wait_title(driver, "Choose a password")
    type_into(driver, "password", "short")
    submit(driver, "/signup/password")
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.find_element(By.ID, "form-error").text == "The password needs at least 8 characters."
    type_into(driver, "password", "a long and fresh passphrase")
    submit(driver, "/signup/password")

    wait_title(driver, "A few details")
    labels = [label.text for label in driver.find_elements(By.CSS_SELECTOR, "form label")]
    assert labels == ["First name", "Last name (optional)"], labels
    shot(driver, artifacts, "21-sign-up-details-1")
    type_into(driver, "attribute_family_name", "Lovelace")
    submit(driver, "/signup/attributes")
    assert field_error(driver, "given_name") == "Fill this in."
    assert driver.find_element(By.NAME, "attribute_family_name").get_attribute("value") == "Lovelace"  # kept
    assert driver.switch_to.active_element.get_attribute("name") == "attribute_given_name"  # the first error has the focus
    driver.set_window_size(390, 844)
    shot(driver, artifacts, "22-sign-up-details-1-missing-phone")
    driver.set_window_size(900, 1000)
    type_into(driver, "attribute_given_name", "Ada")
    submit(driver, "/signup/attributes")

    wait_title(driver, "A few details")
    assert driver.find_element(By.NAME, "attribute_birthdate").get_attribute("type") == "date"
    # Nothing exists before the last page.
    with pytest.raises(RuntimeError):
        setup["cli"].run("users", "show", email)
    type_into(driver, "attribute_city", "L0nd0n")
    submit(driver, "/signup/attributes")
    assert field_error(driver, "city").startswith("This value isn't accepted")
    shot(driver, artifacts, "23-sign-up-details-2-invalid")
    type_into(driver, "attribute_city", "London")
    submit(driver, "/signup/attributes")

    # A passkey is offered once, before going back to the app; "Not now" goes on without one.
    wait_title(driver, "Sign in faster next time")
    shot(driver, artifacts, "24-sign-up-passkey-offer")
    driver.find_element(By.ID, "passkey-skip").click()
    wait_title(driver, "Allow access?")
    driver.find_element(By.CSS_SELECTOR, "form[action='/consent'] button[value='allow']").click()
    record = code_at_callback(callback, driver, flow)
    tokens = assert_tokens(op.redeem_code(web_client, record.params["code"], flow.verifier, flow.redirect_uri))
    claims = op.verify_id_token(tokens["id_token"], web_client, nonce=flow.nonce, access_token=tokens["access_token"])
    assert claims["email"] == email and claims["email_verified"] is True, claims
    info = op.userinfo(tokens["access_token"]).json()
    assert info["given_name"] == "Ada" and info["family_name"] == "Lovelace", info
    profile = json.loads(setup["cli"].run("users", "show", email, "--json"))["profile"]
    assert profile["address"] == {"locality": "London"} and "birthdate" not in profile, profile
    driver.delete_all_cookies()

    # The password chosen on the way signs in.
    again = Flow(op, web_client, web_client.redirect_uri)
    driver.get(again.url)
    wait_title(driver, "Sign in")
    type_into(driver, "email", email)
    type_into(driver, "password", "a long and fresh passphrase")
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]:not([formaction])").click()
    code_at_callback(callback, driver, again)
    driver.delete_all_cookies()


def test_browser_prompt_create_opens_the_sign_up_page_and_an_existing_address_learns_nothing(op, driver, artifacts, sink, app_client,
                                                                                            setup):
    taken = unique("taken")
    setup["cli"].run("users", "add", taken, "--json")
    flow = Flow(op, app_client, app_client.redirect_uris[1])
    driver.get(flow.url + "&prompt=create&ui_locales=ru&login_hint=" + taken)
    wait_title(driver, "Создание учётной записи")
    assert driver.find_element(By.NAME, "email").get_attribute("value") == taken  # login_hint
    shot(driver, artifacts, "24-sign-up-ru")
    before = len(sink.to(taken))
    submit(driver, "/signup")
    wait_title(driver, "Подтвердите адрес")  # the same page as for a new address
    notice = sink.next_to(taken, before)
    assert notice.code() is None, "an account's address got a sign-up code"
    type_into(driver, "code", "12345678")
    submit(driver, "/signup/verify")
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "form-error"))
    assert driver.title.startswith("Подтвердите адрес")
    driver.delete_all_cookies()

    # "I have an account": back to the login page of the same request.
    driver.get(flow.url + "&prompt=create")
    wait_title(driver, "Create your account")
    driver.find_element(By.CSS_SELECTOR, "button[formaction='/signup/signin']").click()
    wait_title(driver, "Sign in")
    driver.delete_all_cookies()


def test_discovery_says_prompt_create(op):
    assert "create" in op.config["prompt_values_supported"]
