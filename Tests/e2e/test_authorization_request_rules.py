"""Rules of the authorization endpoint (RFC 6749 §4.1, RFC 7636, RFC 9207, OpenID
Connect Core §3.1.2): what is refused, how the answer travels back, and that it
carries `iss`."""

import pytest

from e2e_support import random_token


def assert_redirected_error(result, op, error, state=True):
    """An error sent back to the redirect URI, with iss and the request's state, and no code."""
    assert result.kind in ("redirect", "form_post"), result.describe()
    assert result.params.get("error") == error, result.describe()
    assert result.params.get("iss") == op.issuer, result.describe()
    assert "code" not in result.params
    if state:
        assert result.params.get("state") == result.sent["state"], result.describe()
    return result.params


def assert_error_page(result, status=400):
    """An error shown to the user; nothing is redirected."""
    assert result.kind == "error_page", result.describe()
    assert result.response.status_code == status
    assert "Location" not in result.response.headers
    return result.page


# -- success and the response modes


def test_code_response_carries_state_and_iss(op, alice_agent, first_client):
    result = alice_agent.sign_in(first_client, None)
    assert not result.in_fragment
    assert result.location.startswith(first_client.redirect_uri + "?")
    assert result.params["state"] == result.sent["state"]
    assert result.params["iss"] == op.issuer
    assert result.response.headers.get("Cache-Control", "").startswith("no-store")


def test_response_without_state_has_no_state(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, state=None)
    assert result.kind == "redirect" and result.code, result.describe()
    assert "state" not in result.params
    assert result.params["iss"] == op.issuer


def test_authorization_endpoint_accepts_post(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, method="POST")
    assert result.kind == "redirect" and result.code, result.describe()
    assert result.params["iss"] == op.issuer


def test_response_mode_fragment_puts_the_response_in_the_fragment(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, response_mode="fragment")
    assert result.kind == "redirect" and result.in_fragment, result.describe()
    assert result.location.startswith(first_client.redirect_uri + "#")
    assert result.code and result.params["state"] == result.sent["state"] and result.params["iss"] == op.issuer


def test_response_mode_form_post_returns_an_auto_submitting_form(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, response_mode="form_post")
    assert result.kind == "form_post", result.describe()
    assert result.response.status_code == 200
    assert result.location == first_client.redirect_uri
    form = result.page.form(id="response")
    assert form.method == "post"
    assert set(form.fields) == {"code", "state", "iss"}
    assert form.fields["state"] == result.sent["state"] and form.fields["iss"] == op.issuer
    assert result.page.scripts >= 1, "the form should submit itself"
    csp = result.response.headers["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in csp and "frame-ancestors 'none'" in csp
    # The code in the form works.
    assert op.redeem(first_client, result).status_code == 200


def test_errors_use_the_requested_response_mode(op, alice_agent, first_client):
    fragment = alice_agent.authorize(first_client, response_mode="fragment", response_type="token")
    assert fragment.in_fragment
    assert_redirected_error(fragment, op, "unsupported_response_type")
    posted = alice_agent.authorize(first_client, response_mode="form_post", response_type="token")
    assert posted.kind == "form_post"
    assert_redirected_error(posted, op, "unsupported_response_type")


# -- refused requests, redirected back with an error


@pytest.mark.parametrize("response_type", ["token", "id_token", "code id_token", "code token"])
def test_only_response_type_code_is_supported(op, alice_agent, first_client, response_type):
    result = alice_agent.authorize(first_client, response_type=response_type)
    assert_redirected_error(result, op, "unsupported_response_type")


def test_pkce_plain_is_refused(op, alice_agent, first_client):
    verifier = random_token(48)
    result = alice_agent.authorize(first_client, pkce=False, code_challenge=verifier, code_challenge_method="plain")
    assert_redirected_error(result, op, "invalid_request")


@pytest.mark.parametrize("challenge", ["short", "x" * 129, "not base64url!" * 4])
def test_malformed_code_challenge_is_refused(op, alice_agent, first_client, challenge):
    result = alice_agent.authorize(first_client, pkce=False, code_challenge=challenge, code_challenge_method="S256")
    assert_redirected_error(result, op, "invalid_request")


def test_public_client_without_code_challenge_is_refused(op, alice_agent, spa_client):
    result = alice_agent.authorize(spa_client, pkce=False)
    assert_redirected_error(result, op, "invalid_request")


def test_confidential_client_may_omit_pkce(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, pkce=False)
    assert result.kind == "redirect" and result.code, result.describe()


def test_request_object_is_not_supported(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, request="eyJhbGciOiJub25lIn0.e30.")
    assert_redirected_error(result, op, "request_not_supported")


def test_request_uri_that_was_not_pushed_is_an_error_page(op, alice_agent, first_client):
    # A request_uri names a pushed request (RFC 9126); anything else is unknown, and since the
    # request (with its redirect URI) is unknown, the error can only be a page.
    result = alice_agent.authorize(first_client, request_uri="https://client.example.org/request.jwt")
    page = assert_error_page(result)
    assert "invalid_request_uri" in page.text


def test_scope_the_client_is_not_allowed_is_invalid_scope(op, alice_agent, limited_client):
    result = alice_agent.authorize(limited_client, scope="openid profile")
    assert_redirected_error(result, op, "invalid_scope")


def test_unknown_scopes_are_ignored(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, scope="openid email x-unknown-scope")
    assert result.kind == "redirect" and result.code, result.describe()
    token = op.redeem(first_client, result).json()
    assert set(token["scope"].split()) == {"openid", "email"}


def test_unknown_parameters_are_ignored(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, foo="bar", x_vendor_extension="1")
    assert result.kind == "redirect" and result.code, result.describe()


@pytest.mark.parametrize("name", ["scope", "state", "nonce", "response_type", "code_challenge"])
def test_repeated_parameter_is_invalid_request(op, alice_agent, first_client, name):
    pairs, verifier = alice_agent.authorization_params(first_client)
    value = dict(pairs)[name]
    pairs.append((name, value))
    result = alice_agent.authorize(first_client, pairs=pairs, code_verifier=verifier)
    # A repeated state can't be echoed: only check it when it's another parameter.
    assert_redirected_error(result, op, "invalid_request", state=name != "state")


def test_unknown_response_mode_is_invalid_request(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, response_mode="web_message")
    assert_redirected_error(result, op, "invalid_request")


def test_missing_response_type_is_invalid_request(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, response_type=None)
    assert_redirected_error(result, op, "invalid_request")


# -- refused requests that must NOT be redirected


def test_unknown_client_id_shows_an_error_page(op, agent, first_client):
    pairs, _ = agent.authorization_params(first_client, client_id="no-such-client")
    result = agent.authorize(first_client, pairs=pairs)
    page = assert_error_page(result)
    assert "invalid_request" in page.text


@pytest.mark.parametrize("variant", [
    lambda uri: uri + "/other",
    lambda uri: uri + "?x=1",
    lambda uri: uri + "/",
    lambda uri: uri.replace("127.0.0.1", "localhost"),
    lambda uri: uri.upper().replace("HTTP://", "http://"),
    lambda uri: "https://attacker.example/cb",
], ids=["path", "query", "slash", "host", "case", "foreign"])
def test_unregistered_redirect_uri_shows_an_error_page(op, agent, first_client, variant):
    result = agent.authorize(first_client, redirect_uri=variant(first_client.redirect_uri))
    assert_error_page(result)


def test_missing_redirect_uri_shows_an_error_page(op, agent, first_client):
    result = agent.authorize(first_client, redirect_uri=None)
    assert_error_page(result)


def test_repeated_client_id_shows_an_error_page(op, agent, first_client):
    pairs, _ = agent.authorization_params(first_client)
    pairs.append(("client_id", first_client.client_id))
    assert_error_page(agent.authorize(first_client, pairs=pairs))


def test_errors_before_the_redirect_uri_is_trusted_are_not_redirected_even_with_other_errors(op, agent, first_client):
    # Both a bad redirect URI and a bad response_type: the redirect URI wins, no redirect.
    result = agent.authorize(first_client, redirect_uri="https://attacker.example/cb", response_type="token")
    assert_error_page(result)


# -- prompt, max_age and single sign-on


def test_prompt_none_without_session_is_login_required(op, agent, first_client):
    result = agent.authorize(first_client, prompt="none")
    assert_redirected_error(result, op, "login_required")


def test_prompt_none_without_consent_is_consent_required(op, alice_agent, clients):
    result = alice_agent.authorize(clients("consent_none"), prompt="none")
    assert_redirected_error(result, op, "consent_required")


def test_live_session_gives_silent_sso(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client)
    assert result.kind == "redirect" and result.code and result.seen == [], result.describe()
    none = alice_agent.authorize(first_client, prompt="none")
    assert none.kind == "redirect" and none.code, none.describe()


def test_first_login_shows_the_login_page(op, agent, first_client):
    result = agent.authorize(first_client)
    assert result.kind == "login", result.describe()
    assert result.response.status_code == 200


def test_prompt_login_forces_the_login_page(op, alice_agent, alice, first_client):
    result = alice_agent.authorize(first_client, prompt="login")
    assert result.kind == "login", result.describe()
    # Signing in again completes the request, with a fresh auth_time.
    before = alice_agent.tokens(first_client)
    done = alice_agent.authorize(first_client, prompt="login", user=alice)
    assert done.kind == "redirect" and done.code and done.seen == ["login"], done.describe()
    token = op.redeem(first_client, done).json()
    claims = op.verify_id_token(token["id_token"], first_client, nonce=done.sent["nonce"])
    old = op.verify_id_token(before["id_token"], first_client)
    assert claims["auth_time"] >= old["auth_time"]


def test_max_age_zero_forces_login(op, agent, alice, first_client):
    # A session that was just created: max_age=0 still demands a new authentication.
    agent.sign_in(first_client, alice)
    result = agent.authorize(first_client, max_age="0")
    assert result.kind == "login", result.describe()


def test_max_age_larger_than_the_session_age_gives_sso(op, alice_agent, first_client):
    result = alice_agent.authorize(first_client, max_age="86400")
    assert result.kind == "redirect" and result.code, result.describe()


def test_nonce_goes_into_the_id_token(op, alice_agent, first_client):
    nonce = random_token(16)
    token = alice_agent.tokens(first_client, nonce=nonce)
    assert op.verify_id_token(token["id_token"], first_client)["nonce"] == nonce
