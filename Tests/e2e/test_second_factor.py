"""Two-step verification (issue 28): a person sets up an authenticator app on the account page
(a QR code and its key as text, confirmed by a first code, ten recovery codes shown once), and
from then on every sign-in asks for the app's code, a recovery code or a passkey after the
first factor; a client registered with --require-mfa makes people without one set up an app
on the way, and a request demanding acr urn:tessera:acr:mfa steps a one-factor session up. The
codes are computed here from the key the page shows (RFC 6238), as an authenticator app would.
Headless Chromium; screenshots go to e2e-artifacts/two-step-*.png."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import struct
import subprocess
import time

import pytest
import requests
from selenium.webdriver.common.by import By

from e2e_support import (CLI, CallbackServer, TesseraServer, free_port, new_chromium, new_database, query_rows, query_url,
                         random_token, s256, screenshot_both, unverified_claims, wait_for_next_page)

PASSWORD = "a two-step page passphrase"
MFA = "urn:tessera:acr:mfa"
# The ID token names the class reached (its strongest) when the request asks for the acr claim.
ACR = json.dumps({"id_token": {"acr": None}})


@pytest.fixture(scope="module")
def site(binary, workdir):
    database = new_database(workdir, "twostep")
    port = free_port()
    server = TesseraServer(binary, database, workdir, name="twostep", port=port,
                           args=["--issuer", f"http://localhost:{port}", "--reauthenticate-after", "10m"])
    server.issuer = f"http://localhost:{port}"
    server.start()
    server.cli = CLI(binary, database, workdir)
    server.callback = CallbackServer()
    server.client = server.cli.add_client("Two-Step Shop", redirect_uris=[server.callback.base + "/cb"], public=True,
                                          first_party=True)
    server.strict = json.loads(server.cli.run("clients", "add", "--name", "Strict Bank", "--json", "--public", "--first-party",
                                              "--require-mfa", "--redirect-uri", server.callback.base + "/strict"))
    yield server
    server.callback.close()
    server.stop()


@pytest.fixture
def browser():
    driver = new_chromium()
    yield driver
    driver.quit()


def totp(key: str, step: int) -> str:
    """RFC 6238 with an authenticator app's defaults: HMAC-SHA-1, 6 digits, 30-second steps."""
    secret = key.replace(" ", "").upper()
    secret = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(secret, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def step_now() -> int:
    return int(time.time()) // 30


class App:
    """An authenticator app holding one key: each code it gives is of a step not given before
    (the server takes each step once; it accepts the next step too, as clocks drift)."""

    def __init__(self, key: str):
        self.key = key
        self.last = step_now() - 1

    def code(self) -> str:
        # Never a step behind the clock (a request crossing a step boundary would make it two),
        # at most one ahead: past that, wait for the clock.
        while max(self.last + 1, step_now()) > step_now() + 1:
            time.sleep(0.5)
        self.last = max(self.last + 1, step_now())
        return totp(self.key, self.last)


def wrong(app: App) -> str:
    """A code none of the steps the server would accept now gives."""
    accepted = {totp(app.key, step_now() + delta) for delta in (-1, 0, 1, 2)}
    return next(code for code in ("000000", "111111", "222222") if code not in accepted)


def new_person(server) -> str:
    email = f"t{random_token(6).lower()}@twostep.example"
    server.cli.add_user(email, PASSWORD)
    return email


def submit(driver, selector: str) -> None:
    button = driver.find_element(By.CSS_SELECTOR, selector)
    button.click()
    wait_for_next_page(driver, button)


def sign_in_on_account_page(driver, server, email: str) -> None:
    driver.get(server.issuer + "/account")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    submit(driver, "form[action='/account/login'] button[type=submit]")


def sign_in_on_login_page(driver, email: str) -> None:
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    submit(driver, "form[action='/login'] button[type=submit]")


def heading(driver) -> str:
    return driver.find_element(By.TAG_NAME, "h1").text


def turn_on(driver, server, email: str, artifacts=None) -> tuple[App, list[str]]:
    """Signs in on the account page and sets up an app; answers it and the recovery codes."""
    sign_in_on_account_page(driver, server, email)
    assert heading(driver) == "Your account", driver.page_source[:800]
    submit(driver, "form[action='/account/two-step/start'] button")
    assert driver.find_element(By.CSS_SELECTOR, ".qr svg")
    key = driver.find_element(By.CSS_SELECTOR, ".totp-secret code").text
    assert len(key.replace(" ", "")) == 32, key
    if artifacts:
        section = driver.find_element(By.CSS_SELECTOR, "section[aria-labelledby=two-step-title]")
        driver.execute_script("arguments[0].scrollIntoView()", section)
        screenshot_both(driver, artifacts / "two-step-setup.png")
    app = App(key)
    driver.find_element(By.ID, "setup-code").send_keys(app.code())
    submit(driver, "form[action='/account/two-step/confirm'] button")
    assert heading(driver) == "Your recovery codes", driver.page_source[:800]
    codes = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "ol.codes code")]
    if artifacts:
        screenshot_both(driver, artifacts / "two-step-recovery-codes.png")
    submit(driver, "form button[type=submit]")
    assert "Two-step verification is on" in driver.page_source
    return app, codes


def sign_out(driver, server) -> None:
    driver.get(server.issuer + "/health")
    driver.delete_all_cookies()


def authorize(driver, server, client=None, redirect="/cb", **extra) -> tuple[str, str]:
    client = client or server.client
    state, verifier = random_token(8), random_token(48)
    driver.get(query_url(server.issuer + "/authorize", {
        "response_type": "code", "client_id": client["client_id"], "redirect_uri": server.callback.base + redirect,
        "scope": "openid email", "state": state, "code_challenge": s256(verifier), "code_challenge_method": "S256",
        "claims": ACR, **extra}))
    return state, verifier


def answer(server, state: str) -> dict:
    record = server.callback.wait_for(lambda record: record.query.get("state") == state, timeout=30)
    assert record is not None, "no answer came to the redirect URI"
    return record.query


def tokens_after(server, state: str, verifier: str, client=None, redirect="/cb") -> dict:
    client = client or server.client
    query = answer(server, state)
    assert "code" in query, query
    response = requests.post(server.issuer + "/token", data={
        "grant_type": "authorization_code", "code": query["code"], "redirect_uri": server.callback.base + redirect,
        "client_id": client["client_id"], "code_verifier": verifier}, timeout=10)
    assert response.status_code == 200, response.text
    return unverified_claims(response.json()["id_token"])


def enter_code(driver, code: str) -> None:
    field = driver.find_element(By.ID, "code")
    field.clear()
    field.send_keys(code)
    submit(driver, f"form[action='/login/second-factor'] button[type=submit]")


def alert(driver) -> str:
    return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, "p.alert[role=alert]:not([hidden])"))


def test_an_app_set_up_on_the_account_page_is_asked_for_at_every_sign_in(site, browser, artifacts):
    """Set up by a first code, with ten recovery codes shown once and stored only as hashes;
    then a password alone opens nothing: the login page's sign-in waits for the app's code, a
    wrong code is refused, a right one signs in with amr pwd otp mfa and acr mfa; a code
    already used is refused the next time."""
    email = new_person(site)
    app, codes = turn_on(browser, site, email, artifacts)
    assert len(codes) == 10 and len(set(codes)) == 10 and all(len(code) == 11 and code[5] == "-" for code in codes), codes
    assert "10 recovery codes left" in browser.page_source
    screenshot_both(browser, artifacts / "two-step-account-on.png")
    [(sealed,)] = query_rows(site.database, "SELECT sealed_secret FROM totp_factors JOIN users ON users.id = totp_factors.user_id "
                                            "WHERE users.email = ?", (email,))
    assert sealed.startswith("enc:v1:") and app.key.replace(" ", "") not in sealed
    stored = [row[0] for row in query_rows(site.database, "SELECT code_hash FROM recovery_codes JOIN users ON users.id = "
                                                          "recovery_codes.user_id WHERE users.email = ?", (email,))]
    assert len(stored) == 10 and not any(code.replace("-", "") in hash for code in codes for hash in stored)

    sign_out(browser, site)
    state, verifier = authorize(browser, site)
    sign_in_on_login_page(browser, email)
    assert heading(browser) == "Two-step verification", browser.page_source[:800]
    assert "Two-Step Shop" in browser.page_source
    # No session yet: the account page asks for a sign-in.
    cookies = {cookie["name"]: cookie["value"] for cookie in browser.get_cookies()}
    assert "tessera_session" not in cookies and "tessera_2fa" in cookies
    screenshot_both(browser, artifacts / "two-step-login.png")
    enter_code(browser, wrong(app))
    assert "isn't right" in alert(browser)
    screenshot_both(browser, artifacts / "two-step-wrong-code.png")
    enter_code(browser, app.code())
    claims = tokens_after(site, state, verifier)
    assert claims["email"] == email
    assert claims["amr"] == ["pwd", "otp", "mfa"] and claims["acr"] == MFA, claims

    # The same code again, in a new sign-in: spent.
    used = totp(app.key, app.last)
    sign_out(browser, site)
    authorize(browser, site)
    sign_in_on_login_page(browser, email)
    enter_code(browser, used)
    assert "isn't right" in alert(browser)


def test_a_recovery_code_signs_in_once_and_new_codes_cancel_the_old(site, browser):
    email = new_person(site)
    app, codes = turn_on(browser, site, email)
    sign_out(browser, site)
    state, verifier = authorize(browser, site)
    sign_in_on_login_page(browser, email)
    enter_code(browser, codes[0].upper().replace("-", " "))
    claims = tokens_after(site, state, verifier)
    assert claims["amr"] == ["pwd", "otp", "mfa"], claims
    # Spent: refused the second time; the others still work, and the page counts them.
    sign_out(browser, site)
    sign_in_on_account_page(browser, site, email)
    enter_code(browser, codes[0])
    assert "isn't right" in alert(browser)
    enter_code(browser, codes[1])
    assert heading(browser) == "Your account"
    assert "8 recovery codes left" in browser.page_source
    submit(browser, "form[action='/account/two-step/recovery-codes'] button")
    fresh = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "ol.codes code")]
    assert len(fresh) == 10 and not set(fresh) & set(codes)
    submit(browser, "form button[type=submit]")
    assert "new recovery codes" in browser.page_source
    sign_out(browser, site)
    sign_in_on_account_page(browser, site, email)
    enter_code(browser, codes[2])
    assert "isn't right" in alert(browser), "the old codes were cancelled"
    enter_code(browser, fresh[0])
    assert heading(browser) == "Your account"


def test_turned_off_the_password_is_enough_again(site, browser):
    email = new_person(site)
    app, codes = turn_on(browser, site, email)
    submit(browser, "form[action='/account/two-step/remove'] button")
    assert "Two-step verification is off" in browser.page_source
    assert query_rows(site.database, "SELECT count(*) FROM recovery_codes JOIN users ON users.id = recovery_codes.user_id "
                                     "WHERE users.email = ?", (email,))[0][0] in (0, "0")
    sign_out(browser, site)
    state, verifier = authorize(browser, site)
    sign_in_on_login_page(browser, email)
    claims = tokens_after(site, state, verifier)
    assert claims["amr"] == ["pwd"] and claims["acr"] == "urn:tessera:acr:1fa"


def test_a_client_requiring_a_second_factor_has_one_set_up_on_the_way(site, browser, artifacts):
    """--require-mfa: a person without a second factor signs in with a password, sets up an app
    on the second page (its QR code and key), sees the recovery codes once and continues back
    to the app with amr pwd otp mfa. Their next sign-in to any client asks for the app."""
    email = new_person(site)
    state, verifier = authorize(browser, site, client=site.strict, redirect="/strict")
    sign_in_on_login_page(browser, email)
    assert heading(browser) == "Two-step verification"
    assert "This app asks for a second step" in browser.page_source
    assert browser.find_elements(By.CSS_SELECTOR, ".qr svg") and not browser.find_elements(By.ID, "code")
    screenshot_both(browser, artifacts / "two-step-required-setup.png")
    app = App(browser.find_element(By.CSS_SELECTOR, ".totp-secret code").text)
    browser.find_element(By.ID, "setup-code").send_keys("123")
    submit(browser, "form[action='/login/second-factor/setup'] button")
    assert "isn't right" in alert(browser)
    browser.find_element(By.ID, "setup-code").send_keys(app.code())
    submit(browser, "form[action='/login/second-factor/setup'] button")
    assert heading(browser) == "Your recovery codes"
    assert len(browser.find_elements(By.CSS_SELECTOR, "ol.codes code")) == 10
    submit(browser, "form[action='/login/second-factor/continue'] button")
    claims = tokens_after(site, state, verifier, client=site.strict, redirect="/strict")
    assert claims["amr"] == ["pwd", "otp", "mfa"] and claims["acr"] == MFA, claims
    # The session answers the strict client again without asking.
    state, verifier = authorize(browser, site, client=site.strict, redirect="/strict")
    assert tokens_after(site, state, verifier, client=site.strict, redirect="/strict")["acr"] == MFA


def test_a_one_factor_session_steps_up_for_a_request_that_demands_it(site, browser):
    """A session made with a password alone (no second factor set up) answers the ordinary
    client; the strict client, and a request demanding acr mfa, ask only for the second step
    (no password again); prompt=none gets interaction_required instead."""
    email = new_person(site)
    sign_in_on_account_page(browser, site, email)
    assert heading(browser) == "Your account"
    state, verifier = authorize(browser, site)
    assert tokens_after(site, state, verifier)["acr"] == "urn:tessera:acr:1fa"
    demand = json.dumps({"id_token": {"acr": {"essential": True, "values": [MFA]}}})
    state, _ = authorize(browser, site, claims=demand, prompt="none")
    assert answer(site, state).get("error") == "interaction_required"
    state, verifier = authorize(browser, site, claims=demand)
    assert heading(browser) == "Two-step verification"
    assert not browser.find_elements(By.ID, "password")
    app = App(browser.find_element(By.CSS_SELECTOR, ".totp-secret code").text)
    browser.find_element(By.ID, "setup-code").send_keys(app.code())
    submit(browser, "form[action='/login/second-factor/setup'] button")
    submit(browser, "form[action='/login/second-factor/continue'] button")
    claims = tokens_after(site, state, verifier)
    assert claims["acr"] == MFA and claims["amr"] == ["pwd", "otp", "mfa"]


def test_wrong_codes_are_limited_and_the_page_expires(site, browser):
    """Five wrong codes for one waiting sign-in, then even the right code is refused (429);
    without the waiting sign-in's cookie the page's form is refused as expired."""
    email = new_person(site)
    app, _ = turn_on(browser, site, email)
    sign_out(browser, site)
    authorize(browser, site)
    sign_in_on_login_page(browser, email)
    for _ in range(5):
        enter_code(browser, wrong(app))
    enter_code(browser, app.code())
    assert "Too many wrong codes" in alert(browser), alert(browser)
    browser.delete_cookie("tessera_2fa")
    enter_code(browser, app.code())
    assert "waited too long" in browser.page_source
    # A post without the page's CSRF token, or from nowhere: refused, never a 500.
    response = requests.post(site.issuer + "/login/second-factor", data={"code": "123456"}, timeout=10)
    assert response.status_code == 400
    response = requests.post(site.issuer + "/login/second-factor/passkey/options", data={"csrf_token": "x"}, timeout=10)
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"


def native(server, path: str, data: dict) -> requests.Response:
    return requests.post(server.issuer + path, data={"client_id": server.client["client_id"], **data}, timeout=10)


def native_password_sign_in(server, email: str) -> requests.Response:
    started = native(server, "/oauth2/v2.0/initiate", {"username": email, "challenge_type": "password redirect"}).json()
    asked = native(server, "/oauth2/v2.0/challenge", {"continuation_token": started["continuation_token"]}).json()
    assert asked["challenge_type"] == "password", asked
    return native(server, "/oauth2/v2.0/token", {"continuation_token": asked["continuation_token"], "grant_type": "password",
                                                 "password": PASSWORD, "scope": "openid email"})


def test_the_native_api_answers_mfa_required_and_takes_the_code(site, browser):
    """Entra's strong-authentication steps: the password answers invalid_grant/mfa_required with a
    continuation token; introspect lists the authenticator app and recovery codes; challenge
    with an id says a 6-digit code is next; grant_type=mfa_oob with a wrong code is
    invalid_oob_value, with the right one the tokens (amr pwd otp mfa). Each token works once."""
    email = new_person(site)
    app, codes = turn_on(browser, site, email)
    first = native_password_sign_in(site, email)
    assert first.status_code == 400, first.text
    body = first.json()
    assert body["error"] == "invalid_grant" and body["suberror"] == "mfa_required" and 50076 in body["error_codes"], body
    assert "access_token" not in body
    listed = native(site, "/oauth2/v2.0/introspect", {"continuation_token": body["continuation_token"]})
    assert listed.status_code == 200, listed.text
    methods = listed.json()["methods"]
    assert [method["id"] for method in methods] == ["authenticator_app", "recovery_code"], methods
    again = native(site, "/oauth2/v2.0/introspect", {"continuation_token": body["continuation_token"]})
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant", "a continuation token works once"
    chosen = native(site, "/oauth2/v2.0/challenge", {"continuation_token": listed.json()["continuation_token"], "id": "authenticator_app"})
    assert chosen.status_code == 200, chosen.text
    challenge = chosen.json()
    assert challenge["challenge_type"] == "oob" and challenge["challenge_channel"] == "authenticator_app" and challenge["code_length"] == 6
    wrong_answer = native(site, "/oauth2/v2.0/token", {"continuation_token": challenge["continuation_token"], "grant_type": "mfa_oob",
                                                       "oob": wrong(app), "scope": "openid email"})
    assert wrong_answer.status_code == 400 and wrong_answer.json()["suberror"] == "invalid_oob_value", wrong_answer.text
    tokens = native(site, "/oauth2/v2.0/token", {"continuation_token": challenge["continuation_token"], "grant_type": "mfa_oob",
                                                 "oob": app.code(), "scope": "openid email"})
    assert tokens.status_code == 200, tokens.text
    claims = unverified_claims(tokens.json()["id_token"])
    assert claims["email"] == email and claims["amr"] == ["pwd", "otp", "mfa"], claims
    # A recovery code, straight at the token endpoint after mfa_required (introspect and challenge are optional).
    second = native_password_sign_in(site, email).json()
    recovered = native(site, "/oauth2/v2.0/token", {"continuation_token": second["continuation_token"], "grant_type": "mfa_oob",
                                                    "oob": codes[0], "scope": "openid email"})
    assert recovered.status_code == 200, recovered.text
    # A client requiring a second factor, for someone without one: set it up in the browser first.
    plain = new_person(site)
    started = requests.post(site.issuer + "/oauth2/v2.0/initiate", data={
        "client_id": site.strict["client_id"], "username": plain, "challenge_type": "password redirect"}, timeout=10).json()
    asked = requests.post(site.issuer + "/oauth2/v2.0/challenge", data={
        "client_id": site.strict["client_id"], "continuation_token": started["continuation_token"]}, timeout=10).json()
    refused = requests.post(site.issuer + "/oauth2/v2.0/token", data={
        "client_id": site.strict["client_id"], "continuation_token": asked["continuation_token"], "grant_type": "password",
        "password": PASSWORD, "scope": "openid"}, timeout=10)
    assert refused.status_code == 400 and refused.json()["suberror"] == "registration_required", refused.text


def test_tessera_login_native_asks_for_the_second_factor_on_the_terminal(site, browser, binary, tmp_path):
    """`tessera login --native --password-stdin`: after the password, the prompt for the app's
    code; a wrong one is reported and retyped, the right one prints the claims."""
    email = new_person(site)
    app, _ = turn_on(browser, site, email)
    done = subprocess.run(
        [binary, "login", "--native", "--issuer", site.issuer, "--client-id", site.client["client_id"], "--email", email,
         "--password-stdin", "--token-file", str(tmp_path / "tokens.json")],
        input=f"{PASSWORD}\n{wrong(app)}\n{app.code()}\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("Two-step verification:") == 2 and "invalid_oob_value" in done.stderr, done.stderr
    assert json.loads(done.stdout)["amr"] == ["pwd", "otp", "mfa"]
