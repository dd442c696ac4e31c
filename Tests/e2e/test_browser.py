"""A real browser (headless Chromium driven by Selenium) through the hosted pages:
sign in, consent, land on the client's redirect URI with a code; a form_post
response; the error page; the Russian pages; RP-initiated logout. Screenshots go to
e2e-artifacts/ for people to look at."""

import shutil
import time

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from e2e_support import assert_tokens, query_url, random_token, s256, screenshot_both


@pytest.fixture(scope="module")
def driver():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,1000",
                     "--lang=en-US", "--disable-gpu", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    browser = webdriver.Chrome(service=service, options=options)
    browser.set_page_load_timeout(60)
    yield browser
    browser.quit()


class Flow:
    """One authorization request made by the browser."""

    def __init__(self, op, client, **extra):
        self.state, self.nonce, self.verifier = random_token(12), random_token(12), random_token(48)
        params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
                  "scope": "openid profile email", "state": self.state, "nonce": self.nonce,
                  "code_challenge": s256(self.verifier), "code_challenge_method": "S256", **extra}
        self.url = query_url(op.endpoint("authorization_endpoint"), params)


def shot(driver, artifacts, name):
    screenshot_both(driver, artifacts / f"{name}.png")


def wait_title(driver, prefix, timeout=30):
    try:
        WebDriverWait(driver, timeout).until(lambda d: d.title.startswith(prefix))
    except TimeoutException:
        raise AssertionError(f"expected a page titled {prefix!r}, got {driver.title!r} at {driver.current_url}:\n"
                             f"{driver.page_source[:1500]}")


def sign_in(driver, user):
    driver.find_element(By.NAME, "email").clear()
    driver.find_element(By.NAME, "email").send_keys(user.email)
    driver.find_element(By.NAME, "password").send_keys(user.password)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button[type=submit]").click()


def click_decision(driver, decision):
    driver.find_element(By.CSS_SELECTOR, f"form[action='/consent'] button[value='{decision}']").click()


def console(driver):
    try:
        return "\n".join(entry["message"] for entry in driver.get_log("browser"))
    except Exception as error:  # the log is a nicety for the failure message
        return f"(no console log: {error})"


def wait_callback(callback, driver, state, timeout=10):
    record = callback.wait_for(lambda r: r.params.get("state") == state, timeout)
    assert record is not None, (f"no callback with state {state}; the browser is at {driver.current_url} "
                                f"({driver.title!r}); browser console:\n{console(driver)}")
    return record


def complete_if_asked(driver, user):
    """Signs in and allows if the pages show up (when a test runs on its own)."""
    time.sleep(0.5)
    if driver.find_elements(By.CSS_SELECTOR, "form[action='/login']"):
        sign_in(driver, user)
        time.sleep(0.5)
    if driver.find_elements(By.CSS_SELECTOR, "form[action='/consent']"):
        click_decision(driver, "allow")


def test_browser_signs_in_consents_and_lands_on_the_redirect_uri(op, driver, callback, artifacts, alice, browser_client):
    flow = Flow(op, browser_client)
    driver.get(flow.url)
    wait_title(driver, "Sign in")
    assert driver.find_element(By.CSS_SELECTOR, "button[type=submit]").text == "Sign in"
    shot(driver, artifacts, "01-login-en")
    sign_in(driver, alice)

    wait_title(driver, "Allow access?")
    shot(driver, artifacts, "02-consent-en")
    click_decision(driver, "allow")

    record = wait_callback(callback, driver, flow.state)
    assert record.method == "GET" and record.path == "/cb"
    assert record.params["iss"] == op.issuer and record.params["code"]
    WebDriverWait(driver, 10).until(lambda d: d.current_url.startswith(browser_client.redirect_uri))
    shot(driver, artifacts, "03-callback")
    # The session cookie is HttpOnly: page scripts can't see it.
    assert "tessera_session" not in (driver.execute_script("return document.cookie") or "")

    token = assert_tokens(op.redeem_code(browser_client, record.params["code"], flow.verifier))
    claims = op.verify_id_token(token["id_token"], browser_client, nonce=flow.nonce, access_token=token["access_token"])
    assert claims["sub"] == alice.id


def test_browser_first_party_sign_in_goes_straight_to_the_redirect_uri(op, driver, callback, alice, first_client):
    # prompt=login: the login page even with a session; a first-party client has no consent page,
    # so the login form's POST is answered with the redirect to the client.
    flow = Flow(op, first_client, prompt="login")
    driver.get(flow.url)
    wait_title(driver, "Sign in")
    sign_in(driver, alice)
    record = wait_callback(callback, driver, flow.state)
    assert record.params.get("code") and record.params.get("iss") == op.issuer
    assert_tokens(op.redeem_code(first_client, record.params["code"], flow.verifier))


def test_browser_form_post_response(op, driver, callback, alice, browser_client):
    flow = Flow(op, browser_client, response_mode="form_post")
    driver.get(flow.url)
    complete_if_asked(driver, alice)
    record = wait_callback(callback, driver, flow.state)
    assert record.method == "POST" and record.path == "/cb"
    assert set(record.form) == {"code", "state", "iss"}
    assert record.form["iss"] == op.issuer
    assert_tokens(op.redeem_code(browser_client, record.form["code"], flow.verifier))


def test_browser_silent_sso_with_prompt_none(op, driver, callback, alice, browser_client):
    flow = Flow(op, browser_client)
    driver.get(flow.url)
    complete_if_asked(driver, alice)
    wait_callback(callback, driver, flow.state)
    again = Flow(op, browser_client, prompt="none")
    driver.get(again.url)
    record = wait_callback(callback, driver, again.state)
    assert record.params.get("code") and "error" not in record.params


def test_browser_error_page_for_an_unregistered_redirect_uri(op, driver, callback, artifacts, browser_client):
    flow = Flow(op, browser_client, redirect_uri="https://attacker.example/cb")
    driver.get(flow.url)
    wait_title(driver, "This sign-in request can")
    shot(driver, artifacts, "04-error-en")
    assert driver.current_url.startswith(op.issuer + "/")
    assert "invalid_request" in driver.page_source
    assert callback.wait_for(lambda r: r.params.get("state") == flow.state, timeout=1) is None


def test_browser_russian_login_and_consent(op, driver, callback, artifacts, alice, browser_client):
    flow = Flow(op, browser_client, ui_locales="ru", prompt="login consent")
    driver.get(flow.url)
    wait_title(driver, "Вход")
    assert driver.find_element(By.CSS_SELECTOR, "button[type=submit]").text == "Войти"
    shot(driver, artifacts, "05-login-ru")
    sign_in(driver, alice)
    wait_title(driver, "Разрешить доступ?")
    shot(driver, artifacts, "06-consent-ru")
    click_decision(driver, "allow")
    record = wait_callback(callback, driver, flow.state)
    assert record.params.get("code")


def test_browser_error_page_in_russian(op, driver, artifacts, browser_client):
    flow = Flow(op, browser_client, client_id="no-such-client", ui_locales="ru")
    driver.get(flow.url)
    wait_title(driver, "Не удалось")
    shot(driver, artifacts, "07-error-ru")


def test_browser_logout_with_confirmation(op, driver, callback, artifacts, alice, browser_client):
    # Make sure there is a session to end.
    flow = Flow(op, browser_client)
    driver.get(flow.url)
    complete_if_asked(driver, alice)
    wait_callback(callback, driver, flow.state)

    state = random_token(8)
    target = browser_client.post_logout_redirect_uris[0]
    driver.get(query_url(op.endpoint("end_session_endpoint"),
                         {"client_id": browser_client.client_id, "post_logout_redirect_uri": target, "state": state}))
    wait_title(driver, "Sign out")
    shot(driver, artifacts, "08-logout-en")
    driver.find_element(By.CSS_SELECTOR, "form[action='/logout'] button[type=submit]").click()
    record = wait_callback(callback, driver, state)
    assert record.path == "/logged-out"

    # The session is gone: prompt=none now answers login_required.
    after = Flow(op, browser_client, prompt="none")
    driver.get(after.url)
    record = wait_callback(callback, driver, after.state)
    assert record.params.get("error") == "login_required"
    assert record.params.get("iss") == op.issuer


def test_browser_signed_out_page(op, driver, artifacts):
    driver.get(op.endpoint("end_session_endpoint"))
    wait_title(driver, "Signed out")
    shot(driver, artifacts, "09-signed-out-en")
