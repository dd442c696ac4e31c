"""RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): a valid id_token_hint
of the current session logs out at once and returns to the registered
post_logout_redirect_uri with state; anything else asks the user first."""

import pytest

from e2e_support import UserAgent, parse_page, set_cookie_headers


def signed_in(op, alice, client):
    agent = UserAgent(op)
    token = agent.tokens(client, user=alice, scope="openid")
    return agent, token


def assert_session_ended(agent, client, old_cookie_value):
    result = agent.authorize(client, prompt="none")
    assert result.error == "login_required", result.describe()
    # Even the old cookie, sent again, no longer names a session.
    agent.http.cookies.set("tessera_session", old_cookie_value, domain="127.0.0.1", path="/")
    result = agent.authorize(client, prompt="none")
    assert result.error == "login_required", result.describe()


def assert_session_alive(agent, client):
    result = agent.authorize(client, prompt="none")
    assert result.kind == "redirect" and result.code, result.describe()


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_logout_with_id_token_hint_of_the_session_redirects_at_once(op, alice, first_client, method):
    agent, token = signed_in(op, alice, first_client)
    cookie = agent.cookie("tessera_session").value
    target = first_client.post_logout_redirect_uris[0]
    params = {"id_token_hint": token["id_token"], "post_logout_redirect_uri": target, "state": "bye-123"}
    if method == "GET":
        r = agent.http.get(op.endpoint("end_session_endpoint"), params=params, allow_redirects=False, timeout=10)
    else:
        r = agent.http.post(op.endpoint("end_session_endpoint"), data=params, allow_redirects=False, timeout=10)
    assert r.status_code == 303, r.text[:300]
    assert r.headers["Location"] == target + "?state=bye-123"
    cleared = [c for c in set_cookie_headers(r) if c.startswith("tessera_session=")]
    assert cleared and ("max-age=0" in cleared[0].lower() or "expires=" in cleared[0].lower()), cleared
    assert_session_ended(agent, first_client, cookie)


def test_logout_with_hint_and_without_redirect_shows_signed_out_page(op, alice, first_client):
    agent, token = signed_in(op, alice, first_client)
    r = agent.http.get(op.endpoint("end_session_endpoint"), params={"id_token_hint": token["id_token"]},
                       allow_redirects=False, timeout=10)
    assert r.status_code == 200
    assert "You are signed out." in r.text
    assert_session_ended(agent, first_client, "x")


def test_logout_without_hint_asks_for_confirmation(op, alice, web_client, first_client):
    agent, _ = signed_in(op, alice, first_client)
    cookie = agent.cookie("tessera_session").value
    target = web_client.post_logout_redirect_uris[0]
    r = agent.http.get(op.endpoint("end_session_endpoint"),
                       params={"client_id": web_client.client_id, "post_logout_redirect_uri": target, "state": "s1"},
                       allow_redirects=False, timeout=10)
    assert r.status_code == 200
    assert r.headers.get("X-Frame-Options") == "DENY"
    assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
    page = parse_page(r.text)
    form = page.form(action="/logout")
    assert form is not None and form.method == "post", r.text[:500]
    assert form.fields.get("csrf_token")
    assert_session_alive(agent, first_client)

    # A forged confirmation (wrong CSRF token) does not sign out.
    forged = agent.http.post(op.endpoint("end_session_endpoint"), data=dict(form.fields, csrf_token="z" * 43),
                             allow_redirects=False, timeout=10)
    assert forged.status_code != 303
    assert_session_alive(agent, first_client)

    confirmed = agent.http.post(op.issuer + form.action, data=form.fields, allow_redirects=False, timeout=10)
    assert confirmed.status_code == 303, confirmed.text[:300]
    assert confirmed.headers["Location"] == target + "?state=s1"
    assert_session_ended(agent, first_client, cookie)


def test_logout_with_hint_of_another_session_asks_for_confirmation(op, alice, alice_agent, first_client):
    other_token = alice_agent.tokens(first_client, scope="openid")  # the shared session's sid
    agent, _ = signed_in(op, alice, first_client)
    r = agent.http.get(op.endpoint("end_session_endpoint"),
                       params={"id_token_hint": other_token["id_token"],
                               "post_logout_redirect_uri": first_client.post_logout_redirect_uris[0]},
                       allow_redirects=False, timeout=10)
    assert r.status_code == 200
    assert parse_page(r.text).form(action="/logout") is not None
    assert_session_alive(agent, first_client)
    assert_session_alive(alice_agent, first_client)


@pytest.mark.parametrize("case", ["unregistered", "other client's", "no client"])
def test_unregistered_post_logout_redirect_uri_is_refused(op, agent, web_client, spa_client, first_client, case):
    if case == "unregistered":
        params = {"client_id": web_client.client_id, "post_logout_redirect_uri": "https://attacker.example/bye"}
    elif case == "other client's":
        # Registered, but for another client.
        params = {"client_id": web_client.client_id, "post_logout_redirect_uri": first_client.post_logout_redirect_uris[1]}
    else:
        params = {"post_logout_redirect_uri": web_client.post_logout_redirect_uris[0]}
    r = agent.http.get(op.endpoint("end_session_endpoint"), params=params, allow_redirects=False, timeout=10)
    assert r.status_code == 400
    assert "Location" not in r.headers


def test_invalid_id_token_hint_is_refused(op, agent, first_client):
    r = agent.http.get(op.endpoint("end_session_endpoint"),
                       params={"id_token_hint": "eyJhbGciOiJSUzI1NiJ9.e30.c2ln",
                               "post_logout_redirect_uri": first_client.post_logout_redirect_uris[0]},
                       allow_redirects=False, timeout=10)
    assert r.status_code == 400
    assert "Location" not in r.headers
