"""Passkeys (issue 28): a person adds a passkey on the account page, signs in with it on the
hosted login without typing an address (the button, and the browser's suggestions in the address
field), renames and removes it; the ID token says how (`amr` hwk/swk with pin, `acr` phr/phrh).
Headless Chromium with WebDriver's virtual authenticators plays the person's devices: a second
authenticator holding the first one's credential id with another key is refused, and one whose
counter went backwards gets the passkey blocked. Screenshots go to e2e-artifacts/passkeys-*.png.

WebAuthn needs a secure context whose host is a domain: the server's issuer here is
http://localhost:PORT (127.0.0.1 is an address, which can't be a relying party ID)."""

from __future__ import annotations

import json
import time

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Credential
from selenium.webdriver.support.ui import WebDriverWait

from e2e_support import (CLI, CallbackServer, TesseraServer, free_port, new_chromium, new_database, query_rows, query_url,
                         random_token, s256, screenshot_both, unverified_claims, wait_for_next_page)

PASSWORD = "a passkey page passphrase"
RECENT = 30  # --reauthenticate-after, seconds


@pytest.fixture(scope="module")
def site(binary, workdir, sink):
    database = new_database(workdir, "passkeys")
    port = free_port()
    server = TesseraServer(binary, database, workdir, name="passkeys", port=port,
                           args=["--issuer", f"http://localhost:{port}", "--reauthenticate-after", f"{RECENT}s",
                                 "--smtp-url", sink.url])
    server.issuer = f"http://localhost:{port}"
    server.start()
    server.cli = CLI(binary, database, workdir)
    server.callback = CallbackServer()
    server.client = server.cli.add_client("Passkey Shop", redirect_uris=[server.callback.base + "/cb"], public=True, first_party=True)
    yield server
    server.callback.close()
    server.stop()


@pytest.fixture
def browser():
    """Chromium whose pages see no conditional mediation: Chromium's virtual authenticator
    answers a conditional request at once, which would sign in as the login page loads, before
    the test presses the button (test_the_browser_offers_the_passkey_in_the_address_field has it)."""
    driver = new_chromium()
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
        "source": "if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);"})
    yield driver
    driver.quit()


def add_authenticator(driver, synced: bool = False) -> str:
    """A platform authenticator that verifies the person (as a fingerprint would), holding
    discoverable credentials; `synced`: its passkeys are backup-eligible and backed up."""
    parameters = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                  "isUserVerified": True, "isUserConsenting": True}
    if synced:
        parameters.update(defaultBackupEligibility=True, defaultBackupState=True)
    # Selenium's add_virtual_authenticator has no backup flags: the WebDriver command itself,
    # then Selenium told which authenticator its credential calls are for.
    driver._authenticator_id = driver.execute("addVirtualAuthenticator", parameters)["value"]
    return driver._authenticator_id


def new_person(server) -> str:
    email = f"p{random_token(6).lower()}@passkeys.example"
    server.cli.add_user(email, PASSWORD)
    return email


def sign_in_with_password(driver, server, email: str) -> None:
    driver.get(server.issuer + "/account")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    button = driver.find_element(By.CSS_SELECTOR, "form[action='/account/login'] button[type=submit]")
    button.click()
    wait_for_next_page(driver, button)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Your account", driver.page_source[:800]


def add_passkey(driver) -> None:
    button = driver.find_element(By.ID, "passkey-add")
    button.click()
    wait_for_next_page(driver, button)
    assert "done=passkey-added" in driver.current_url, driver.page_source[:1500]


def passkey_rows(server, email: str) -> list[tuple]:
    """(credential id, name, sign count, backup eligible, suspended at) of the person's passkeys,
    typed alike from SQLite and PostgreSQL."""
    rows = query_rows(server.database, "SELECT passkeys.id, name, sign_count, backup_eligible, suspended_at FROM passkeys "
                                       "JOIN users ON users.id = passkeys.user_id WHERE users.email = ? ORDER BY passkeys.created_at",
                      (email,))
    return [(id, name, int(count), backup in (1, True, "1", "t", "true"), suspended) for id, name, count, backup, suspended in rows]


def sign_out(driver, server) -> None:
    """Forgets the provider's cookies (the browser may be on the client's page by now)."""
    driver.get(server.issuer + "/health")
    driver.delete_all_cookies()


def authorize(driver, server, **extra) -> tuple[str, str]:
    """Opens the client's authorization request; returns its state and PKCE verifier."""
    state, verifier = random_token(8), random_token(48)
    driver.get(query_url(server.issuer + "/authorize", {
        "response_type": "code", "client_id": server.client["client_id"], "redirect_uri": server.callback.base + "/cb",
        "scope": "openid email", "state": state, "code_challenge": s256(verifier), "code_challenge_method": "S256", **extra}))
    return state, verifier


def tokens_after(server, state: str, verifier: str) -> dict:
    """The code the callback got for `state`, redeemed."""
    callback = server.callback.wait_for(lambda record: record.query.get("state") == state, timeout=30)
    assert callback is not None, "no answer came to the redirect URI"
    assert "code" in callback.query, callback.query
    response = requests.post(server.issuer + "/token", data={
        "grant_type": "authorization_code", "code": callback.query["code"], "redirect_uri": server.callback.base + "/cb",
        "client_id": server.client["client_id"], "code_verifier": verifier}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def press_passkey_button(driver) -> None:
    button = driver.find_element(By.ID, "passkey-sign-in")
    WebDriverWait(driver, 10).until(lambda _: button.is_displayed())
    button.click()


def login_error(driver) -> str:
    WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "p.alert[role=alert]:not([hidden])"))
    return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, "p.alert[role=alert]:not([hidden])"))


def test_a_passkey_added_on_the_account_page_signs_in_without_an_address(site, browser, artifacts):
    """Added after a recent sign-in, listed with its kind; then the login page's button signs in
    with it and the ID token says a hardware-bound, verified key: phishing-resistant."""
    email = new_person(site)
    add_authenticator(browser)
    sign_in_with_password(browser, site, email)
    add_passkey(browser)
    assert "The passkey was added" in browser.page_source
    [(credential_id, name, _, backup_eligible, suspended)] = passkey_rows(site, email)
    assert name.startswith("Passkey on Chrome") and not backup_eligible and suspended is None
    [held] = browser.get_credentials()
    assert held.rp_id == "localhost" and held.is_resident_credential
    assert held.id.rstrip("=") == credential_id
    item = browser.find_element(By.CSS_SELECTOR, ".passkey-item")
    assert "On one device only" in item.text and "Not used yet" in item.text
    screenshot_both(browser, artifacts / "passkeys-account.png")

    sign_out(browser, site)
    state, verifier = authorize(browser, site, acr_values="phrh phr urn:tessera:acr:mfa")
    screenshot_both(browser, artifacts / "passkeys-login.png")
    assert browser.find_element(By.ID, "email").get_attribute("autocomplete") == "username webauthn"
    press_passkey_button(browser)
    tokens = tokens_after(site, state, verifier)
    claims = unverified_claims(tokens["id_token"])
    assert claims["email"] == email
    assert claims["amr"] == ["hwk", "pin", "mfa"]
    assert claims["acr"] == "phrh"
    # The passkey's counter and last use were recorded.
    [(_, _, sign_count, _, _)] = passkey_rows(site, email)
    assert sign_count >= 1


def credential_id_bytes(text: str) -> bytes:
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_a_synced_passkey_says_so_and_reaches_phr_but_not_phrh(site, browser):
    email = new_person(site)
    add_authenticator(browser, synced=True)
    sign_in_with_password(browser, site, email)
    add_passkey(browser)
    [(_, _, _, backup_eligible, _)] = passkey_rows(site, email)
    assert backup_eligible
    assert "Synced between your devices" in browser.find_element(By.CSS_SELECTOR, ".passkey-item").text
    sign_out(browser, site)
    state, verifier = authorize(browser, site, acr_values="phrh phr")
    press_passkey_button(browser)
    claims = unverified_claims(tokens_after(site, state, verifier)["id_token"])
    assert claims["amr"] == ["swk", "pin", "mfa"] and claims["acr"] == "phr"


def test_the_browser_offers_the_passkey_in_the_address_field(site, artifacts):
    """Conditional UI: as the login page loads it asks for a passkey with mediation
    "conditional", and the browser offers the passkeys among the address field's suggestions;
    Chromium's virtual authenticator picks the one it holds at once, so the page signs in by
    itself, without the button."""
    driver = new_chromium()
    try:
        email = new_person(site)
        add_authenticator(driver)
        sign_in_with_password(driver, site, email)
        add_passkey(driver)
        sign_out(driver, site)
        state, verifier = authorize(driver, site)
        claims = unverified_claims(tokens_after(site, state, verifier)["id_token"])
        assert claims["email"] == email and claims["amr"] == ["hwk", "pin", "mfa"]
    finally:
        driver.quit()


def test_another_authenticator_with_the_credential_id_but_another_key_is_refused(site, browser):
    email = new_person(site)
    add_authenticator(browser)
    sign_in_with_password(browser, site, email)
    add_passkey(browser)
    [original] = browser.get_credentials()
    browser.remove_virtual_authenticator()
    # A forger's device: the same credential id and user handle, a key of its own.
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    forged_key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    add_authenticator(browser)
    forged = original.to_dict()
    forged.update(privateKey=b64(forged_key), signCount=original.sign_count + 10)
    browser.add_credential(Credential.from_dict(forged))
    sign_out(browser, site)
    authorize(browser, site)
    press_passkey_button(browser)
    assert "didn't work" in login_error(browser)
    assert passkey_rows(site, email)[0][4] is None  # not blocked: the owner's key still works


def test_a_counter_that_goes_backwards_blocks_the_passkey(site, browser):
    """The same key on two authenticators (a cloned device-bound key): once the clone's counter is
    behind the one recorded, the passkey stops signing anyone in until its owner replaces it."""
    email = new_person(site)
    add_authenticator(browser)
    sign_in_with_password(browser, site, email)
    add_passkey(browser)
    sign_out(browser, site)
    for _ in range(2):
        state, verifier = authorize(browser, site)
        press_passkey_button(browser)
        tokens_after(site, state, verifier)
        sign_out(browser, site)
    [original] = browser.get_credentials()
    assert original.sign_count >= 2
    browser.remove_virtual_authenticator()
    add_authenticator(browser)
    clone = original.to_dict()
    clone.update(signCount=1)
    browser.add_credential(Credential.from_dict(clone))
    authorize(browser, site)
    press_passkey_button(browser)
    assert "blocked" in login_error(browser)
    assert passkey_rows(site, email)[0][4] is not None
    events = [json.loads(line) for line in site.cli.run("audit", "--user", email, "--json").splitlines()]
    assert any(event["kind"] == "passkey_suspended" for event in events)
    # The owner sees it blocked on the account page.
    sign_in_with_password(browser, site, email)
    assert "Blocked: it looks copied" in browser.find_element(By.CSS_SELECTOR, ".passkey-item").text


def test_a_passkey_is_renamed_and_removed_and_then_signs_nobody_in(site, browser, artifacts):
    email = new_person(site)
    add_authenticator(browser)
    sign_in_with_password(browser, site, email)
    add_passkey(browser)
    browser.find_element(By.CSS_SELECTOR, ".passkey-item summary").click()
    name = browser.find_element(By.CSS_SELECTOR, ".passkey-item input[name=name]")
    name.clear()
    name.send_keys("Work laptop")
    button = browser.find_element(By.CSS_SELECTOR, "form[action='/account/passkeys/rename'] button")
    button.click()
    wait_for_next_page(browser, button)
    assert "done=passkey-renamed" in browser.current_url
    assert passkey_rows(site, email)[0][1] == "Work laptop"
    screenshot_both(browser, artifacts / "passkeys-renamed.png")
    button = browser.find_element(By.CSS_SELECTOR, "form[action='/account/passkeys/remove'] button")
    button.click()
    wait_for_next_page(browser, button)
    assert "done=passkey-removed" in browser.current_url and passkey_rows(site, email) == []
    assert "No passkeys yet." in browser.page_source
    sign_out(browser, site)
    authorize(browser, site)
    press_passkey_button(browser)
    assert "isn't registered here" in login_error(browser)


def test_adding_a_passkey_needs_a_recent_sign_in(site, browser):
    """A session older than reauthenticate-after is sent to confirm it's the owner first."""
    email = new_person(site)
    add_authenticator(browser)
    sign_in_with_password(browser, site, email)
    options = browser.execute_async_script("""
        const done = arguments[0];
        const form = document.querySelector("form[data-passkey=register]");
        fetch(form.dataset.options, {method: "POST", body: new URLSearchParams(new FormData(form))})
          .then(r => r.json().then(body => done({status: r.status, body})));""")
    assert options["status"] == 200 and options["body"]["authenticatorSelection"]["residentKey"] == "required"
    assert options["body"]["rp"]["id"] == "localhost" and options["body"]["attestation"] == "none"
    assert [p["alg"] for p in options["body"]["pubKeyCredParams"]] == [-7, -8, -257]
    # The session ages past the window: the options answer says where to confirm.
    query_rows(site.database, "UPDATE sessions SET auth_time = auth_time - 3600 WHERE user_id = "
                              "(SELECT id FROM users WHERE email = ?)", (email,))
    button = browser.find_element(By.ID, "passkey-add")
    button.click()
    WebDriverWait(browser, 20).until(lambda d: "/account/confirm" in d.current_url)
    assert "To add a passkey, sign in again first" in browser.page_source


def test_a_challenge_is_single_use_and_bound_to_its_page(site):
    """An options request without the page's CSRF token is refused; a made-up credential is
    refused as a failed sign-in, never a server error."""
    session = requests.Session()
    page = session.get(query_url(site.issuer + "/authorize", {
        "response_type": "code", "client_id": site.client["client_id"], "redirect_uri": site.callback.base + "/cb",
        "scope": "openid", "state": "s", "code_challenge": s256(random_token(48)), "code_challenge_method": "S256"}), timeout=10)
    assert page.status_code == 200
    interaction = page.text.split('name="interaction" value="')[1].split('"')[0]
    csrf = page.text.split('name="csrf_token" value="')[1].split('"')[0]
    refused = session.post(site.issuer + "/login/passkey/options", data={"interaction": interaction}, timeout=10)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_request"
    options = session.post(site.issuer + "/login/passkey/options", data={"interaction": interaction, "csrf_token": csrf}, timeout=10)
    assert options.status_code == 200
    body = options.json()
    assert body["rpId"] == "localhost" and body["allowCredentials"] == [] and len(credential_id_bytes(body["challenge"])) == 32
    client_data = json.dumps({"type": "webauthn.get", "challenge": body["challenge"], "origin": site.issuer}).encode()
    made_up = {"id": "AAAA", "rawId": "AAAA", "type": "public-key", "response": {
        "clientDataJSON": b64(client_data), "authenticatorData": b64(b"\0" * 37), "signature": b64(b"\0" * 64)}}
    for attempt in range(2):
        answer = session.post(site.issuer + "/login/passkey", data={
            "interaction": interaction, "csrf_token": csrf, "credential": json.dumps(made_up)}, timeout=10)
        assert answer.status_code in (400, 401), answer.status_code
        # The first use took the challenge: the second says to try again.
        expected = "registered here" if attempt == 0 else "That took too long"
        assert expected in answer.text, answer.text[:2000]
    garbage = session.post(site.issuer + "/login/passkey", data={"interaction": interaction, "csrf_token": csrf,
                                                                 "credential": "{not json"}, timeout=10)
    assert garbage.status_code == 401 and "That passkey didn&#39;t work" in garbage.text
    script = requests.get(site.issuer + "/assets/passkeys.js", timeout=10)
    assert script.status_code == 200 and script.headers["Content-Type"].startswith("text/javascript")
    csp = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "connect-src 'self'" in csp


def b64(data: bytes) -> str:
    import base64
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_request_demanding_phr_asks_for_a_passkey_and_refuses_a_password(site, browser, artifacts):
    """An essential acr (the claims parameter): the login page says the app wants a passkey; a
    password sign-in made for the request is answered unmet_authentication_requirements, a
    passkey sign-in gets the code and an ID token that says phr."""
    email = new_person(site)
    add_authenticator(browser)
    sign_in_with_password(browser, site, email)
    add_passkey(browser)
    demand = json.dumps({"id_token": {"acr": {"essential": True, "values": ["phrh", "phr"]}}})
    # The account page's password session doesn't reach it: the login page again, saying why.
    state, _ = authorize(browser, site, claims=demand)
    assert "This app asks you to sign in with a passkey." in browser.find_element(By.TAG_NAME, "main").text
    screenshot_both(browser, artifacts / "passkeys-demanded.png")
    browser.find_element(By.ID, "email").send_keys(email)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    button = browser.find_element(By.CSS_SELECTOR, "form[action='/login'] button[type=submit]")
    button.click()
    refused = site.callback.wait_for(lambda record: record.query.get("state") == state, timeout=30)
    assert refused is not None and refused.query["error"] == "unmet_authentication_requirements", refused
    assert "phr" in refused.query["error_description"]
    state, verifier = authorize(browser, site, claims=demand)
    press_passkey_button(browser)
    claims = unverified_claims(tokens_after(site, state, verifier)["id_token"])
    assert claims["acr"] == "phrh" and claims["amr"] == ["hwk", "pin", "mfa"]


def submit_form(driver, action: str) -> None:
    button = driver.find_element(By.CSS_SELECTOR, f"form[action='{action}'] button[type=submit]:not([formaction])")
    button.click()
    wait_for_next_page(driver, button)


def test_a_passkey_is_offered_once_right_after_sign_up(site, browser, sink, artifacts):
    """prompt=create: a new account by emailed code; before going back to the app the page
    offers a passkey once; added there, the person never chose a password and signs in with it."""
    add_authenticator(browser)
    email = f"n{random_token(6).lower()}@passkeys.example"
    state, verifier = authorize(browser, site, prompt="create")
    browser.find_element(By.NAME, "email").send_keys(email)
    before = len(sink.to(email))
    submit_form(browser, "/signup")
    code = sink.next_to(email, before).code()
    browser.find_element(By.NAME, "code").send_keys(code)
    submit_form(browser, "/signup/verify")
    for _ in range(4):
        if browser.find_elements(By.ID, "passkey-add"):
            break
        if browser.find_elements(By.CSS_SELECTOR, "form[action='/signup/password']"):
            # The password is optional here: a sign-up by code may go on without one.
            skip = browser.find_elements(By.CSS_SELECTOR, "form[action='/signup/password'] button[formaction]")
            assert skip, "the sign-up insists on a password: " + browser.page_source[:600]
            skip[0].click()
            wait_for_next_page(browser, skip[0])
    assert browser.find_element(By.TAG_NAME, "h1").text == "Sign in faster next time", browser.page_source[:800]
    screenshot_both(browser, artifacts / "passkeys-offer-after-sign-up.png")
    button = browser.find_element(By.ID, "passkey-add")
    WebDriverWait(browser, 10).until(lambda _: button.is_displayed())
    button.click()
    tokens = tokens_after(site, state, verifier)
    assert unverified_claims(tokens["id_token"])["email"] == email
    [(_, name, _, _, _)] = passkey_rows(site, email)
    assert name.startswith("Passkey on Chrome")

    sign_out(browser, site)
    state, verifier = authorize(browser, site)
    press_passkey_button(browser)
    claims = unverified_claims(tokens_after(site, state, verifier)["id_token"])
    assert claims["email"] == email and claims["amr"] == ["hwk", "pin", "mfa"]


def test_acr_values_mfa_asks_a_person_with_a_passkey_for_it_after_the_password(site, browser, artifacts):
    """acr_values=urn:tessera:acr:mfa (voluntary): someone who has a passkey is asked for it as
    the second step after the password; the ID token says both (amr pwd hwk pin mfa, acr mfa).
    Without acr_values the password alone still signs in."""
    email = new_person(site)
    add_authenticator(browser)
    sign_in_with_password(browser, site, email)
    add_passkey(browser)
    sign_out(browser, site)

    state, verifier = authorize(browser, site, acr_values="urn:tessera:acr:mfa")
    browser.find_element(By.ID, "email").send_keys(email)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    submit_form(browser, "/login")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Two-step verification", browser.page_source[:800]
    assert "use a passkey" in browser.page_source.lower()
    screenshot_both(browser, artifacts / "passkeys-as-second-factor.png")
    press_passkey_button(browser)
    claims = unverified_claims(tokens_after(site, state, verifier)["id_token"])
    assert claims["amr"] == ["pwd", "hwk", "pin", "mfa"] and claims["acr"] == "urn:tessera:acr:mfa", claims

    sign_out(browser, site)
    state, verifier = authorize(browser, site)
    browser.find_element(By.ID, "email").send_keys(email)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    submit_form(browser, "/login")
    assert unverified_claims(tokens_after(site, state, verifier)["id_token"])["amr"] == ["pwd"]
