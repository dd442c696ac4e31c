"""The operator's face on the hosted pages (issue 27, branding): a product name, a logo and a
colour from settings, a stylesheet after the built-in one, and any page template replaced from a
folder without rebuilding; the emails carry the name and colour, and any part of one is replaced
from a mail folder; a template that doesn't compile stops the start with its name."""

from __future__ import annotations

import subprocess

import pytest
import requests

from e2e_support import CLI, TesseraServer, free_port, new_chromium, new_database, query_url, random_token, s256

LOGO = ("<svg xmlns='http://www.w3.org/2000/svg' width='120' height='32' viewBox='0 0 120 32'>"
        "<rect width='32' height='32' rx='6' fill='#8a2be2'/><text x='40' y='22' font-size='16' font-family='sans-serif'"
        " fill='#8a2be2'>ACME</text></svg>")
STYLESHEET = ".card { border-top: 6px solid var(--accent); }\n"
MAIL_FOOTER = "<p style=\"color:#5c6370\" id=\"acme-mail-footer\">Acme Corp, 1 Example Road</p>\n</div>\n</body>\n</html>\n"
FOOTER = "<p class=\"muted\" id=\"brand-footer\">Acme Corp · <a href=\"https://acme.example/help\">Help</a></p>\n</main>\n</body>\n</html>\n"


@pytest.fixture(scope="module")
def branded(binary, workdir, sink):
    folder = workdir / "branding"
    pages = folder / "pages"
    pages.mkdir(parents=True, exist_ok=True)
    (folder / "logo.svg").write_text(LOGO)
    (folder / "brand.css").write_text(STYLESHEET)
    (pages / "footer.mustache").write_text(FOOTER)
    mail = folder / "mail"
    mail.mkdir(exist_ok=True)
    (mail / "sign-up-code.en.subject").write_text("Welcome to {{product}}: your code")
    (mail / "mail-footer.html").write_text(MAIL_FOOTER)
    database = new_database(workdir, "branded")
    cli = CLI(binary, database, workdir)
    client = cli.add_client("Acme Shop", redirect_uris=["https://shop.acme.example/cb"], public=True, first_party=True)
    server = TesseraServer(binary, database, workdir, name="branded",
                           args=["--product-name", "Acme ID", "--brand-color", "#8a2be2", "--logo", str(folder / "logo.svg"),
                                 "--stylesheet", str(folder / "brand.css"), "--pages-dir", str(pages), "--mail-dir", str(mail),
                                 "--smtp-url", sink.url]).start()
    yield server, client
    server.stop()


def login_url(server, client) -> str:
    return query_url(server.issuer + "/authorize", {
        "response_type": "code", "client_id": client["client_id"], "redirect_uri": "https://shop.acme.example/cb",
        "scope": "openid email", "state": random_token(8), "code_challenge": s256(random_token(48)), "code_challenge_method": "S256"})


def test_the_login_page_carries_the_brand_and_the_assets_are_served(branded):
    server, client = branded
    page = requests.get(login_url(server, client), timeout=10)
    assert page.status_code == 200
    assert "<title>Sign in · Acme ID</title>" in page.text
    assert '<img src="/assets/logo" alt="" class="logo">Acme ID' in page.text
    assert '<link rel="stylesheet" href="/assets/brand.css">' in page.text
    assert 'id="brand-footer"' in page.text  # the folder's footer template
    assert "img-src 'self'" in page.headers["Content-Security-Policy"]
    logo = requests.get(server.issuer + "/assets/logo", timeout=10)
    assert logo.status_code == 200 and logo.headers["Content-Type"] == "image/svg+xml" and logo.text == LOGO
    assert logo.headers["X-Content-Type-Options"] == "nosniff"
    css = requests.get(server.issuer + "/assets/brand.css", timeout=10)
    assert css.status_code == 200 and "--accent: #8a2be2" in css.text and STYLESHEET in css.text


def test_branded_pages_on_a_phone_and_a_desktop(branded, artifacts):
    server, client = branded
    driver = new_chromium()
    try:
        for width, height, name in ((900, 1000, "desktop"), (390, 844, "phone")):
            driver.set_window_size(width, height)
            driver.get(login_url(server, client))
            assert driver.title == "Sign in · Acme ID"
            logo = driver.find_element("css selector", ".brand img.logo")
            assert logo.size["width"] > 0, "the logo did not load"
            driver.save_screenshot(str(artifacts / f"branding-login-{name}.png"))
        driver.get(login_url(server, client) + "&prompt=create&ui_locales=ru")
        assert driver.title.startswith("Создание учётной записи")
        driver.save_screenshot(str(artifacts / "branding-sign-up-ru-phone.png"))
    finally:
        driver.quit()


def test_the_emails_carry_the_brand_and_the_mail_folder_parts(branded, sink):
    server, client = branded
    email = f"{random_token(6).lower()}@acme.example"
    start = requests.post(server.issuer + "/signup/v1.0/start", data={
        "client_id": client["client_id"], "username": email, "challenge_type": "oob redirect"}, timeout=10)
    assert start.status_code == 200, start.text
    challenge = requests.post(server.issuer + "/signup/v1.0/challenge", data={
        "client_id": client["client_id"], "continuation_token": start.json()["continuation_token"], "challenge_type": "oob redirect"},
        timeout=10)
    assert challenge.status_code == 200, challenge.text
    mail = sink.next_to(email)
    assert mail.subject == "Welcome to Acme ID: your code"  # the folder's subject
    assert mail.message["From"].startswith("Acme ID <no-reply@"), mail.message["From"]
    assert ">Acme ID</p>" in mail.html and "color:#8a2be2" in mail.html  # the built-in header, branded
    assert 'id="acme-mail-footer"' in mail.html and mail.code()  # the folder's footer, the built-in body
    assert "Tessera" not in mail.html + mail.text + mail.subject


def test_a_template_that_does_not_compile_stops_the_start_with_its_name(binary, workdir):
    pages = workdir / "broken-pages"
    pages.mkdir(exist_ok=True)
    (pages / "login.mustache").write_text("{{#open}} never closed")
    done = subprocess.run([binary, "serve", "--database", str(new_database(workdir, "broken-branding")), "--port", str(free_port()),
                           "--pages-dir", str(pages)], cwd=workdir, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert "login.mustache does not compile" in done.stderr, done.stderr
    unknown = workdir / "unknown-pages"
    unknown.mkdir(exist_ok=True)
    (unknown / "signin.mustache").write_text("x")
    done = subprocess.run([binary, "serve", "--database", str(new_database(workdir, "unknown-branding")), "--port", str(free_port()),
                           "--pages-dir", str(unknown)], cwd=workdir, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "signin.mustache is not a page template" in done.stderr, done.stderr
    mail = workdir / "broken-mail"
    mail.mkdir(exist_ok=True)
    (mail / "sign-in-code.en.html").write_text("<p>{{#code}}</p>")
    done = subprocess.run([binary, "serve", "--database", str(new_database(workdir, "broken-mail")), "--port", str(free_port()),
                           "--mail-dir", str(mail)], cwd=workdir, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "sign-in-code.en.html does not compile" in done.stderr, done.stderr
