"""The hosted login and consent pages: forms without JavaScript, CSRF double submit,
cookies, security headers, credential errors, throttling, remembered consent and the
Russian translation."""

import pytest

from e2e_support import UserAgent, parse_page, set_cookie_headers

BAD_CREDENTIALS = "The email or password is incorrect."


def login_page(agent, client, **params):
    result = agent.authorize(client, **params)
    assert result.kind == "login", result.describe()
    return result


def post_login(agent, result, email, password, **overrides):
    form = result.page.form(action="/login")
    data = dict(form.fields, email=email, password=password)
    data.update(overrides)
    return agent.http.post(agent.provider.issuer + form.action, data=data, allow_redirects=False, timeout=60)


def assert_hosted_page_headers(response):
    csp = response.headers.get("Content-Security-Policy", "")
    assert "frame-ancestors 'none'" in csp, csp
    assert response.headers.get("X-Frame-Options") == "DENY"
    assert response.headers["Content-Type"].startswith("text/html")
    assert "no-store" in response.headers.get("Cache-Control", "")


# -- the pages themselves


def test_login_page_is_a_plain_form(op, agent, first_client):
    result = login_page(agent, first_client)
    assert result.response.status_code == 200
    assert_hosted_page_headers(result.response)
    page = result.page
    assert page.title.startswith("Sign in")
    form = page.form(action="/login")
    assert form.method == "post"
    assert {"interaction", "csrf_token", "email", "password"} <= set(form.fields)
    assert form.fields["interaction"] and form.fields["csrf_token"]
    assert any(text == "Sign in" for _, _, text in form.buttons)
    # The page works without JavaScript; its one script, the provider's own file, adds the passkey
    # button (hidden until the script finds WebAuthn) and no inline code runs.
    assert page.scripts == 1 and '<script src="/assets/passkeys.js" defer></script>' in result.response.text
    assert 'data-passkey="sign-in"' in result.response.text and "hidden>" in result.response.text
    assert "First-party App" in page.text
    csrf = agent.cookie("tessera_csrf")
    # The form's token is derived from the cookie by the server (an HMAC), not the cookie itself.
    assert csrf is not None and len(csrf.value) >= 32 and csrf.value != form.fields["csrf_token"]
    assert csrf.has_nonstandard_attr("HttpOnly")


def test_login_hint_prefills_the_email(op, agent, first_client):
    result = login_page(agent, first_client, login_hint="someone@example.com")
    assert result.page.form(action="/login").fields["email"] == "someone@example.com"


def test_session_cookie_is_httponly_and_samesite_lax(op, agent, alice, first_client):
    result = login_page(agent, first_client)
    response = post_login(agent, result, alice.email, alice.password)
    assert response.status_code in (302, 303), response.text[:300]
    cookies = [c for c in set_cookie_headers(response) if c.startswith("tessera_session=")]
    assert len(cookies) == 1, set_cookie_headers(response)
    attributes = [a.strip().lower() for a in cookies[0].split(";")[1:]]
    assert "httponly" in attributes
    assert "samesite=lax" in attributes
    assert "secure" not in attributes, "Secure only for https issuers"
    assert "path=/" in attributes
    # The interaction is finished: the same form can't be replayed.
    replay = post_login(agent, result, alice.email, alice.password)
    assert replay.status_code == 400
    assert "Location" not in replay.headers


def test_consent_page_has_allow_and_deny(op, alice_agent, clients):
    client = clients("consent_remember")
    result = alice_agent.authorize(client, consent=None, scope="openid profile email", prompt="consent")
    assert result.kind == "consent", result.describe()
    assert result.response.status_code == 200
    assert_hosted_page_headers(result.response)
    form = result.page.form(action="/consent")
    assert form.method == "post"
    assert {"interaction", "csrf_token"} <= set(form.fields)
    decisions = {(name, value) for name, value, _ in form.buttons}
    assert decisions == {("decision", "allow"), ("decision", "deny")}
    assert "Consent Remember" in result.page.text
    assert "alice@example.com" in result.page.text


def test_error_page_has_the_security_headers(op, agent, first_client):
    result = agent.authorize(first_client, redirect_uri="https://attacker.example/cb")
    assert result.kind == "error_page"
    assert_hosted_page_headers(result.response)


# -- CSRF


def test_login_with_a_wrong_csrf_token_is_refused(op, agent, alice, first_client):
    result = login_page(agent, first_client)
    response = post_login(agent, result, alice.email, alice.password, csrf_token="x" * 43)
    assert response.status_code == 400
    assert "Location" not in response.headers
    assert not any(c.startswith("tessera_session=") for c in set_cookie_headers(response))


def test_login_without_the_csrf_cookie_is_refused(op, agent, alice, first_client):
    result = login_page(agent, first_client)
    agent.http.cookies.clear()
    response = post_login(agent, result, alice.email, alice.password)
    assert response.status_code == 400
    assert not any(c.startswith("tessera_session=") for c in set_cookie_headers(response))


def test_consent_with_a_wrong_csrf_token_is_refused(op, alice_agent, clients):
    client = clients("consent_remember")
    result = alice_agent.authorize(client, consent=None, prompt="consent")
    form = result.page.form(action="/consent")
    r = alice_agent.http.post(op.issuer + "/consent", data=dict(form.fields, csrf_token="y" * 43, decision="allow"),
                              allow_redirects=False, timeout=10)
    assert r.status_code == 400
    assert "Location" not in r.headers


# -- credentials


def test_wrong_password_and_unknown_email_look_the_same(op, agent, carol, first_client):
    result = login_page(agent, first_client)
    wrong_password = post_login(agent, result, carol.email, "not the password")
    unknown_email = post_login(agent, result, "nobody-here@example.com", carol.password)
    for response in (wrong_password, unknown_email):
        assert response.status_code == 401
        assert BAD_CREDENTIALS in response.text
        assert "Location" not in response.headers
        assert parse_page(response.text).form(action="/login") is not None, "the form is shown again"
    # The right password still works afterwards.
    ok = post_login(agent, result, carol.email, carol.password)
    assert ok.status_code in (302, 303)


def test_repeated_failures_lock_the_account(op, agent, locked_user, first_client):
    result = login_page(agent, first_client)
    for attempt in range(5):
        r = post_login(agent, result, locked_user.email, f"wrong password {attempt}")
        assert r.status_code == 401, f"attempt {attempt + 1}: {r.status_code}"
    blocked = post_login(agent, result, locked_user.email, locked_user.password)
    assert blocked.status_code == 429
    assert "Too many attempts" in blocked.text
    assert "Location" not in blocked.headers
    assert not any(c.startswith("tessera_session=") for c in set_cookie_headers(blocked))


# -- consent


def test_consent_is_remembered_per_client_and_scope_set(op, alice_agent, clients):
    client = clients("consent_remember")
    first = alice_agent.authorize(client, scope="openid email")
    assert first.kind == "redirect" and first.code, first.describe()
    assert "consent" in first.seen
    # The same scopes again: no consent page.
    again = alice_agent.authorize(client, scope="openid email")
    assert again.kind == "redirect" and again.code and again.seen == [], again.describe()
    # A subset: none either.
    subset = alice_agent.authorize(client, scope="openid")
    assert subset.kind == "redirect" and subset.seen == [], subset.describe()
    # prompt=consent always asks.
    forced = alice_agent.authorize(client, scope="openid email", prompt="consent", consent=None)
    assert forced.kind == "consent", forced.describe()
    # A new scope asks again.
    wider = alice_agent.authorize(client, scope="openid email profile", consent=None)
    assert wider.kind == "consent", wider.describe()


def test_consent_is_remembered_per_user(op, alice_agent, agent, carol, web_client):
    # alice has consented to this client; carol, signing in for the first time, is asked.
    alice_agent.sign_in(web_client, None, scope="openid email")
    assert alice_agent.authorize(web_client, scope="openid email").seen == []
    result = agent.authorize(web_client, user=carol, scope="openid email", consent=None)
    assert result.kind == "consent", result.describe()
    assert "carol@example.com" in result.page.text


def test_denied_consent_is_access_denied(op, alice_agent, clients):
    client = clients("consent_deny")
    result = alice_agent.authorize(client, consent="deny")
    assert result.kind == "redirect", result.describe()
    assert result.error == "access_denied"
    assert result.params["state"] == result.sent["state"]
    assert result.params["iss"] == op.issuer
    assert "code" not in result.params
    # Denying is not remembered as consent.
    assert alice_agent.authorize(client, prompt="none").error == "consent_required"


def test_first_party_client_skips_consent(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, scope="openid profile email")
    assert result.kind == "redirect" and result.seen == [], result.describe()


# -- Russian


@pytest.mark.parametrize("how", ["ui_locales", "accept_language"])
def test_login_page_in_russian(op, first_client, how):
    if how == "ui_locales":
        agent = UserAgent(op)
        result = login_page(agent, first_client, ui_locales="ru")
    else:
        agent = UserAgent(op, accept_language="ru-RU,ru;q=0.9,en;q=0.5")
        result = login_page(agent, first_client)
    page = result.page
    assert page.title.startswith("Вход"), page.title
    assert [text for _, _, text in page.form(action="/login").buttons] == ["Войти", "Забыли пароль?", "Создать учётную запись",
                                                                           "Прислать ссылку для входа", "Прислать код на почту"]
    assert "Пароль" in page.text


def test_english_is_the_default(op, first_client):
    agent = UserAgent(op, accept_language="de-DE,fr;q=0.8")
    page = login_page(agent, first_client).page
    assert page.title.startswith("Sign in")


def test_russian_error_message_on_the_login_page(op, first_client, carol):
    agent = UserAgent(op)
    result = login_page(agent, first_client, ui_locales="ru")
    r = post_login(agent, result, "nobody-here@example.com", "whatever-password")
    assert r.status_code == 401
    assert "Неверная электронная почта или пароль." in r.text


def test_consent_page_in_russian(op, alice_agent, clients):
    result = alice_agent.authorize(clients("consent_ru"), ui_locales="ru", consent=None)
    assert result.kind == "consent", result.describe()
    assert result.page.title.startswith("Разрешить доступ?")
    texts = {text for _, _, text in result.page.form(action="/consent").buttons}
    assert texts == {"Разрешить", "Отклонить"}


def test_error_page_in_russian(op, agent, first_client):
    result = agent.authorize(first_client, client_id="no-such-client", ui_locales="ru")
    assert result.kind == "error_page" and result.response.status_code == 400
    assert "Ошибка" in result.page.text
    assert result.page.title.startswith("Не удалось")
