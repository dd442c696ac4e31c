"""The account page (issue 27): a signed-in person edits their profile (structured claims
included; the sensitive ones only right after a sign-in), changes their password, and sees and
ends their sessions, in a real browser (headless Chromium), reading mail from a real SMTP sink.
Screenshots of the page at phone and desktop widths in English and Russian go to
e2e-artifacts/account-*.png."""

from __future__ import annotations

import json
import re
import time

import pytest
import requests
from selenium.webdriver.common.by import By

from e2e_support import CLI, TesseraServer, new_chromium, new_database, random_token, wait_for_next_page

PASSWORD = "an account page passphrase"
RECENT = 8  # --reauthenticate-after, seconds: long enough for one test's steps on a loaded machine, short enough to wait out


@pytest.fixture(scope="module")
def site(binary, workdir, sink):
    database = new_database(workdir, "account-page")
    server = TesseraServer(binary, database, workdir, name="account-page",
                           args=["--smtp-url", sink.url, "--reauthenticate-after", f"{RECENT}s"]).start()
    server.cli = CLI(binary, database, workdir)
    yield server
    server.stop()


def user(server, email: str) -> dict:
    return json.loads(server.cli.run("users", "show", email, "--json"))


def audit_events(server, email: str) -> list[dict]:
    return [json.loads(line) for line in server.cli.run("audit", "--user", email, "--json").splitlines()]


def new_person(server) -> str:
    email = f"p{random_token(6).lower()}@account.example"
    server.cli.add_user(email, PASSWORD)
    return email


@pytest.fixture
def browser():
    driver = new_chromium()
    yield driver
    driver.quit()


def sign_in(driver, server, email: str, password: str = PASSWORD) -> None:
    driver.get(server.issuer + "/account")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(password)
    button = driver.find_element(By.CSS_SELECTOR, "form button[type=submit]")
    button.click()
    wait_for_next_page(driver, button)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Your account", driver.page_source[:800]


def screenshot(driver, artifacts, name: str, width: int) -> None:
    """The whole page at `width`, however long it is."""
    driver.set_window_size(width, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(height + 120, 6000))
    driver.save_screenshot(str(artifacts / f"account-{name}.png"))
    driver.set_window_size(900, 1000)


def field(driver, name: str):
    return driver.find_element(By.NAME, name)


def submit(driver, action: str) -> None:
    """Presses the form's button and waits for the page that answers it."""
    button = driver.find_element(By.CSS_SELECTOR, f"form[action='{action}'] button[type=submit]")
    button.click()
    wait_for_next_page(driver, button)


def notice(driver) -> str:
    return driver.find_element(By.CSS_SELECTOR, "[role=status]").text


def test_the_profile_is_edited_with_each_refusal_next_to_its_field(site, browser, artifacts):
    server = site
    email = new_person(server)
    sign_in(browser, server, email)
    field(browser, "claim.given_name").send_keys("Anna")
    field(browser, "claim.family_name").send_keys("Pavlova")
    field(browser, "claim.birthdate").send_keys("31021990")  # the date input's own typing: 31 Feb does not exist
    field(browser, "claim.address.locality").send_keys("Kazan")
    field(browser, "claim.address.country").send_keys("Russia")
    submit(browser, "/account/profile")
    birthdate = field(browser, "claim.birthdate")
    assert birthdate.get_attribute("aria-invalid") == "true"
    error = browser.find_element(By.ID, birthdate.get_attribute("aria-describedby"))
    assert "must be" in error.text, error.text
    assert browser.switch_to.active_element == birthdate, "the focus is on the first refused field"
    assert field(browser, "claim.given_name").get_attribute("value") == "Anna", "what was typed is kept"
    assert field(browser, "claim.address.locality").get_attribute("value") == "Kazan"
    screenshot(browser, artifacts, "profile-error-desktop", 900)
    birthdate.clear()
    browser.execute_script("arguments[0].value = '1990-02-28'", birthdate)
    submit(browser, "/account/profile")
    assert notice(browser) == "Your profile was saved."
    person = user(server, email)
    assert person["profile"]["given_name"] == "Anna" and person["profile"]["birthdate"] == "1990-02-28"
    assert person["profile"]["address"] == {"locality": "Kazan", "country": "Russia"}
    # Emptying a field removes the claim; a structured claim with no member left goes too.
    field(browser, "claim.family_name").clear()
    field(browser, "claim.address.locality").clear()
    field(browser, "claim.address.country").clear()
    submit(browser, "/account/profile")
    assert notice(browser) == "Your profile was saved."
    person = user(server, email)
    assert "family_name" not in person["profile"] and "address" not in person["profile"]
    events = audit_events(server, email)
    assert any("profile given_name" in (event.get("detail") or "") and event["actor"] == "user" for event in events), events


def test_sensitive_claims_wait_for_a_recent_sign_in(site, browser):
    server = site
    email = new_person(server)
    sign_in(browser, server, email)
    time.sleep(RECENT + 1)
    browser.get(server.issuer + "/account")
    assert field(browser, "claim.address.locality").get_attribute("disabled") == "true", "read-only after a while"
    assert field(browser, "claim.given_name").get_attribute("disabled") is None
    # A forged post of a disabled field is refused by the server too: it asks to confirm.
    cookies = {c["name"]: c["value"] for c in browser.get_cookies()}
    csrf = browser.find_element(By.NAME, "csrf_token").get_attribute("value")
    forged = requests.post(server.issuer + "/account/profile", data={"csrf_token": csrf, "fields": "address", "claim.address.locality": "Elsewhere"},
                           cookies=cookies, allow_redirects=False, timeout=10)
    assert forged.status_code == 200 and "Confirm it&#39;s you" in forged.text
    assert "address" not in user(server, email)["profile"]
    browser.find_element(By.LINK_TEXT, "Confirm it's you to change them").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Confirm it's you"
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    submit(browser, "/account/reauth")
    locality = field(browser, "claim.address.locality")
    assert locality.get_attribute("disabled") is None
    locality.send_keys("Kazan")
    submit(browser, "/account/profile")
    assert user(server, email)["profile"]["address"] == {"locality": "Kazan"}


def test_the_password_is_changed_with_the_current_one_and_other_sessions_end(site, browser, sink):
    server = site
    email = new_person(server)
    other = requests.Session()  # another device, signed in first
    page = other.get(server.issuer + "/account", timeout=10)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    assert other.post(server.issuer + "/account/login", data={"csrf_token": csrf, "email": email, "password": PASSWORD},
                      timeout=30).url.endswith("/account")
    sign_in(browser, server, email)
    sessions = browser.find_elements(By.CSS_SELECTOR, ".session")
    assert len(sessions) == 2 and sum("This browser" in s.text for s in sessions) == 1
    assert any("Python" in s.text for s in sessions) and any("Chrome" in s.text for s in sessions)
    time.sleep(RECENT + 1)  # no longer recent: the current password is asked for
    browser.get(server.issuer + "/account")
    field(browser, "new_password").send_keys("a brand new passphrase")
    submit(browser, "/account/password")
    current = field(browser, "current_password")
    assert current.get_attribute("aria-invalid") == "true" and browser.switch_to.active_element == current
    assert field(browser, "new_password").get_attribute("value") == "", "a password is never typed back"
    current.send_keys("not the password")
    field(browser, "new_password").send_keys("a brand new passphrase")
    submit(browser, "/account/password")
    assert browser.find_element(By.ID, "current-error").text == "The password is incorrect."
    field(browser, "current_password").send_keys(PASSWORD)
    field(browser, "new_password").send_keys("short")
    submit(browser, "/account/password")
    assert "at least" in browser.find_element(By.ID, "new-error").text
    before = len(sink.to(email))
    field(browser, "current_password").send_keys(PASSWORD)
    field(browser, "new_password").send_keys("a brand new passphrase")
    submit(browser, "/account/password")
    assert notice(browser).startswith("Your password was changed")
    assert sink.next_to(email, before).subject == "Your password was changed"
    assert len(browser.find_elements(By.CSS_SELECTOR, ".session")) == 1, "the other device was signed out"
    assert "Your account" not in other.get(server.issuer + "/account", timeout=10).text
    assert login_status(server, email, PASSWORD) == 401 and login_status(server, email, "a brand new passphrase") == 303


def login_status(server, email: str, password: str) -> int:
    session = requests.Session()
    page = session.get(server.issuer + "/account", timeout=10)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    return session.post(server.issuer + "/account/login", data={"csrf_token": csrf, "email": email, "password": password},
                        allow_redirects=False, timeout=30).status_code


def test_a_session_is_ended_from_another(site, browser):
    server = site
    email = new_person(server)
    other = requests.Session()
    page = other.get(server.issuer + "/account", timeout=10)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    other.post(server.issuer + "/account/login", data={"csrf_token": csrf, "email": email, "password": PASSWORD}, timeout=30)
    sign_in(browser, server, email)
    python = next(s for s in browser.find_elements(By.CSS_SELECTOR, ".session") if "Python" in s.text)
    button = python.find_element(By.CSS_SELECTOR, "button")
    button.click()
    wait_for_next_page(browser, button)
    assert notice(browser) == "The session was signed out."
    assert len(browser.find_elements(By.CSS_SELECTOR, ".session")) == 1
    assert "Your account" not in other.get(server.issuer + "/account", timeout=10).text
    # Signing out everywhere else, with nobody else: nothing to press.
    assert not browser.find_elements(By.CSS_SELECTOR, "form[action='/account/sessions/end-others']")


def test_the_account_page_on_a_phone_and_a_desktop_in_both_languages(site, browser, artifacts, workdir):
    server = site
    email = new_person(server)
    profile = workdir / f"profile-{random_token(4)}.json"
    profile.write_text('{"given_name": "Anna", "inn": {"number": "500100732259"}, "address": {"locality": "Kazan", "country": "Russia"}}')
    server.cli.run("users", "update", email, "--profile", str(profile))
    sign_in(browser, server, email)
    assert field(browser, "claim.inn.number").get_attribute("value") == "500100732259", "a claim the person has is shown"
    for language in ("en", "ru"):
        browser.get(server.issuer + f"/account?ui_locales={language}")
        if language == "ru":
            assert browser.find_element(By.TAG_NAME, "h1").text == "Ваша учётная запись"
            assert browser.find_element(By.CSS_SELECTOR, "label[for='claim-address-locality']").text == "Город"
        for width, device in ((390, "phone"), (1200, "desktop")):
            screenshot(browser, artifacts, f"{language}-{device}", width)
        overflow = browser.execute_script("return document.documentElement.scrollWidth > document.documentElement.clientWidth")
        assert not overflow, "nothing wider than the page"


def test_the_address_is_changed_by_a_code_sent_to_the_new_one_and_the_old_one_is_told(site, browser, sink):
    server = site
    email = new_person(server)
    new_email = f"m{random_token(6).lower()}@moved.example"
    sign_in(browser, server, email)
    field(browser, "new_email").send_keys(email)
    submit(browser, "/account/email")
    assert browser.find_element(By.ID, "email-error").text == "Enter an email address other than your current one."
    field(browser, "new_email").send_keys(new_email)
    submit(browser, "/account/email")
    assert "We sent a code to" in browser.find_element(By.CSS_SELECTOR, "form[action='/account/email/confirm'] [role=status]").text
    mail = sink.next_to(new_email)
    assert mail.subject == "Confirm your new email address"
    code = mail.code()
    wrong = "0" * len(code) if code != "0" * len(code) else "1" * len(code)
    field(browser, "code").send_keys(wrong)
    submit(browser, "/account/email/confirm")
    assert browser.find_element(By.ID, "email-error").text.startswith("The code is not right. Attempts left:")
    assert browser.switch_to.active_element == field(browser, "code")
    before = len(sink.to(email))
    field(browser, "code").send_keys(code)
    submit(browser, "/account/email/confirm")
    assert notice(browser) == "Your email address was changed. The old address was told."
    assert new_email in browser.find_element(By.ID, "email-title").find_element(By.XPATH, "..").text
    told = sink.next_to(email, before)
    assert told.subject == "Your account's email address was changed" and new_email in told.text
    assert login_status(server, new_email, PASSWORD) == 303 and login_status(server, email, PASSWORD) == 401
    assert any(f"email changed from {email} to {new_email}" in (event.get("detail") or "") for event in audit_events(server, new_email))


def test_moving_to_an_address_with_an_account_looks_the_same_and_changes_nothing(site, browser, sink):
    server = site
    email, taken = new_person(server), new_person(server)
    sign_in(browser, server, email)
    field(browser, "new_email").send_keys(taken)
    submit(browser, "/account/email")
    assert "We sent a code to" in browser.find_element(By.CSS_SELECTOR, "form[action='/account/email/confirm'] [role=status]").text
    mail = sink.next_to(taken)
    assert mail.subject == "Someone tried to move an account to this address" and mail.code() is None
    field(browser, "code").send_keys("12345678")
    submit(browser, "/account/email/confirm")
    assert browser.find_element(By.ID, "email-error").text.startswith("The code is not right")
    assert user(server, email)["email"] == email and user(server, taken)["email"] == taken


def test_a_person_without_a_password_reaches_the_page_by_an_emailed_link(site, browser, sink):
    server = site
    email = f"n{random_token(6).lower()}@nopassword.example"
    server.cli.run("users", "add", email)
    browser.get(server.issuer + "/account")
    field(browser, "email").send_keys(email)
    button = browser.find_element(By.CSS_SELECTOR, "button[formaction='/account/login/link']")
    button.click()
    wait_for_next_page(browser, button)
    assert email in browser.find_element(By.TAG_NAME, "main").text
    link = re.search(r"https?://\S+/emaillink/v1\.0/signin\?\S+", sink.next_to(email).text).group(0)
    browser.get(link)
    submit_button = browser.find_element(By.CSS_SELECTOR, "form button[type=submit]")
    submit_button.click()
    wait_for_next_page(browser, submit_button)
    assert browser.find_element(By.TAG_NAME, "h1").text == "Your account"
    assert "Your account has no password" in browser.find_element(By.ID, "password-title").find_element(By.XPATH, "..").text
