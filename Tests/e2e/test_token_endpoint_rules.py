"""Rules of the token endpoint (RFC 6749 §3.2, §4.1.3, §5, §6; RFC 7636; RFC 9700):
client authentication failures, single-use codes, PKCE and redirect_uri binding,
refresh token rotation and reuse detection."""

import pytest
import requests

from conftest import SERVER_ENV
from e2e_support import Provider, TesseraServer, assert_oauth_error, assert_tokens, random_token


def test_token_response_is_not_cacheable(op, alice_agent, first_client):
    result = alice_agent.sign_in(first_client, None)
    r = op.redeem(first_client, result)
    assert_tokens(r)
    assert "no-store" in r.headers["Cache-Control"]
    assert r.headers["Content-Type"].startswith("application/json")


def test_reused_code_is_invalid_grant_and_revokes_the_first_tokens(op, alice_agent, web_client):
    result = alice_agent.sign_in(web_client, None)
    first = assert_tokens(op.redeem(web_client, result))
    assert op.userinfo(first["access_token"]).status_code == 200

    assert_oauth_error(op.redeem(web_client, result), "invalid_grant")

    # Everything the first redemption produced is revoked.
    assert op.userinfo(first["access_token"]).status_code == 401
    intro = op.introspect(web_client, first["access_token"])
    assert intro.status_code == 200 and intro.json()["active"] is False
    assert_oauth_error(op.refresh(web_client, first["refresh_token"]), "invalid_grant")


def test_wrong_code_verifier_is_invalid_grant(op, alice_agent, web_client):
    result = alice_agent.sign_in(web_client, None)
    assert_oauth_error(op.redeem(web_client, result, code_verifier=random_token(48)), "invalid_grant")


def test_missing_code_verifier_is_invalid_grant(op, alice_agent, web_client):
    result = alice_agent.sign_in(web_client, None)
    assert_oauth_error(op.redeem(web_client, result, code_verifier=None), "invalid_grant")


@pytest.mark.parametrize("case", ["other registered", "unregistered", "omitted"])
def test_wrong_redirect_uri_is_invalid_grant(op, alice_agent, web_client, case):
    result = alice_agent.sign_in(web_client, None)
    redirect_uri = {
        "other registered": web_client.redirect_uris[1],  # registered for the client, but not the request's
        "unregistered": web_client.redirect_uri + "/x",
        "omitted": None,
    }[case]
    data = {"grant_type": "authorization_code", "code": result.code, "code_verifier": result.code_verifier}
    if redirect_uri:
        data["redirect_uri"] = redirect_uri
    assert_oauth_error(op.post("token_endpoint", data, client=web_client), "invalid_grant")


def test_code_of_another_client_is_invalid_grant(op, alice_agent, first_client, web_client):
    result = alice_agent.sign_in(first_client, None)
    assert_oauth_error(op.redeem(web_client, result), "invalid_grant")


def test_unknown_code_is_invalid_grant(op, web_client):
    data = {"grant_type": "authorization_code", "code": random_token(), "redirect_uri": web_client.redirect_uri,
            "code_verifier": random_token(48)}
    assert_oauth_error(op.post("token_endpoint", data, client=web_client), "invalid_grant")


def test_wrong_client_secret_is_invalid_client(op, alice_agent, web_client):
    result = alice_agent.sign_in(web_client, None)
    data = {"grant_type": "authorization_code", "code": result.code, "redirect_uri": web_client.redirect_uri,
            "code_verifier": result.code_verifier}
    basic = requests.post(op.endpoint("token_endpoint"), data=data, auth=(web_client.client_id, "x" * 43), timeout=10)
    assert_oauth_error(basic, "invalid_client")
    posted = requests.post(op.endpoint("token_endpoint"),
                           data={**data, "client_id": web_client.client_id, "client_secret": "x" * 43}, timeout=10)
    assert_oauth_error(posted, "invalid_client")
    # The code was not spent by the failed attempts.
    assert_tokens(op.redeem(web_client, result))


def test_unknown_client_is_invalid_client(op):
    data = {"grant_type": "authorization_code", "code": random_token(), "redirect_uri": "http://127.0.0.1/cb"}
    r = requests.post(op.endpoint("token_endpoint"), data=data, auth=("no-such-client", "x" * 43), timeout=10)
    assert_oauth_error(r, "invalid_client")


def test_confidential_client_without_credentials_is_invalid_client(op, alice_agent, web_client):
    result = alice_agent.sign_in(web_client, None)
    r = op.redeem(web_client, result, auth_method="none")
    assert_oauth_error(r, "invalid_client")


def test_two_authentication_methods_at_once_are_refused(op, alice_agent, web_client):
    result = alice_agent.sign_in(web_client, None)
    data = {"grant_type": "authorization_code", "code": result.code, "redirect_uri": web_client.redirect_uri,
            "code_verifier": result.code_verifier, "client_id": web_client.client_id,
            "client_secret": web_client.client_secret}
    r = requests.post(op.endpoint("token_endpoint"), data=data,
                      auth=(web_client.client_id, web_client.client_secret), timeout=10)
    assert_oauth_error(r, "invalid_request")


def test_unsupported_grant_type(op, web_client):
    r = op.post("token_endpoint", {"grant_type": "password", "username": "alice@example.com", "password": "x"},
                client=web_client)
    assert_oauth_error(r, "unsupported_grant_type")


def test_grant_type_not_registered_for_the_client_is_unauthorized_client(op, web_client, limited_client):
    assert_oauth_error(op.post("token_endpoint", {"grant_type": "client_credentials"}, client=web_client),
                       "unauthorized_client")
    assert_oauth_error(op.refresh(limited_client, random_token()), "unauthorized_client")


def test_missing_grant_type_is_invalid_request(op, web_client):
    assert_oauth_error(op.post("token_endpoint", {"code": "x"}, client=web_client), "invalid_request")


def test_repeated_parameter_is_invalid_request(op, alice_agent, web_client):
    result = alice_agent.sign_in(web_client, None)
    data = [("grant_type", "authorization_code"), ("code", result.code), ("code", result.code),
            ("redirect_uri", web_client.redirect_uri), ("code_verifier", result.code_verifier)]
    assert_oauth_error(op.post("token_endpoint", data, client=web_client), "invalid_request")


# -- refresh tokens


def test_refresh_token_rotates_and_reuse_revokes_the_family(op, alice_agent, web_client):
    token = alice_agent.tokens(web_client)
    r1 = token["refresh_token"]
    second = assert_tokens(op.refresh(web_client, r1))
    r2 = second["refresh_token"]
    assert r2 and r2 != r1
    third = assert_tokens(op.refresh(web_client, r2))
    r3 = third["refresh_token"]
    assert r3 not in (r1, r2)

    # r1 was already rotated: refused, and the family is revoked...
    assert_oauth_error(op.refresh(web_client, r1), "invalid_grant")
    # ... so the latest refresh token stops working too.
    assert_oauth_error(op.refresh(web_client, r3), "invalid_grant")


def test_a_refresh_retried_within_the_reuse_interval_is_answered(binary, database, workdir, alice_agent, web_client):
    """--refresh-token-reuse-interval: a client that never got the answer to its refresh (a node
    died, the connection dropped) retries with the same token and goes on; once the chain has
    moved on, the old token is a replay again and revokes the family."""
    server = TesseraServer(binary, database, workdir, env=SERVER_ENV, name="reuse-interval",
                           args=["--refresh-token-reuse-interval", "5s"]).start()
    try:
        provider = Provider(server.issuer)
        r1 = alice_agent.tokens(web_client)["refresh_token"]
        lost = assert_tokens(provider.refresh(web_client, r1))["refresh_token"]  # the answer the client never saw
        retried = assert_tokens(provider.refresh(web_client, r1))["refresh_token"]
        assert retried not in (r1, lost)
        r3 = assert_tokens(provider.refresh(web_client, retried))["refresh_token"]
        # The successor was used: r1 again is a replay, and the family is revoked.
        assert_oauth_error(provider.refresh(web_client, r1), "invalid_grant")
        assert_oauth_error(provider.refresh(web_client, r3), "invalid_grant")
        # The successor a retry retired is a replay too (its holder was not the one retrying).
        r1 = alice_agent.tokens(web_client)["refresh_token"]
        lost = assert_tokens(provider.refresh(web_client, r1))["refresh_token"]
        retried = assert_tokens(provider.refresh(web_client, r1))["refresh_token"]
        assert_oauth_error(provider.refresh(web_client, lost), "invalid_grant")
        assert_oauth_error(provider.refresh(web_client, retried), "invalid_grant")
    finally:
        server.stop()


def test_refresh_token_of_another_client_is_invalid_grant(op, alice_agent, web_client, first_client):
    token = alice_agent.tokens(web_client)
    assert_oauth_error(op.refresh(first_client, token["refresh_token"]), "invalid_grant")
    # The rightful owner can still use it: the failed attempt was not a reuse.
    assert_tokens(op.refresh(web_client, token["refresh_token"]))


def test_refresh_token_cannot_widen_the_scope(op, alice_agent, web_client):
    token = alice_agent.tokens(web_client, scope="openid email offline_access")
    r = op.refresh(web_client, token["refresh_token"], scope="openid email profile offline_access")
    assert_oauth_error(r, "invalid_scope")


def test_refresh_token_only_with_offline_access(op, alice_agent, web_client):
    without = alice_agent.tokens(web_client, scope="openid email")
    assert "refresh_token" not in without
    with_offline = alice_agent.tokens(web_client, scope="openid email offline_access")
    assert with_offline.get("refresh_token")


def test_plain_oauth_request_gets_a_refresh_token_but_no_id_token(op, alice_agent, first_client):
    token = alice_agent.tokens(first_client, scope="email profile")
    assert token.get("refresh_token")
    assert "id_token" not in token
    # Without openid, userinfo is not for this token.
    assert op.userinfo(token["access_token"]).status_code in (401, 403)


def test_client_without_the_refresh_grant_gets_no_refresh_token(op, alice_agent, limited_client):
    token = alice_agent.tokens(limited_client, scope="openid email")
    assert "refresh_token" not in token
    token = alice_agent.tokens(limited_client, scope="email")
    assert "refresh_token" not in token


def test_invalid_refresh_token_is_invalid_grant(op, web_client):
    assert_oauth_error(op.refresh(web_client, random_token()), "invalid_grant")


def test_revoking_a_refresh_token_revokes_its_whole_grant(op, alice_agent, web_client):
    token = alice_agent.tokens(web_client)
    assert op.userinfo(token["access_token"]).status_code == 200
    assert op.revoke(web_client, token["refresh_token"], token_type_hint="refresh_token").status_code == 200
    assert_oauth_error(op.refresh(web_client, token["refresh_token"]), "invalid_grant")
    assert op.userinfo(token["access_token"]).status_code == 401
    assert op.introspect(web_client, token["access_token"]).json()["active"] is False
    assert op.introspect(web_client, token["refresh_token"]).json()["active"] is False


def test_another_client_cannot_revoke_a_token(op, alice_agent, web_client, first_client):
    token = alice_agent.tokens(web_client)
    assert op.revoke(first_client, token["refresh_token"]).status_code == 200  # RFC 7009: no hint either way
    assert op.revoke(first_client, token["access_token"]).status_code == 200
    assert op.introspect(web_client, token["access_token"]).json()["active"] is True
    assert_tokens(op.refresh(web_client, token["refresh_token"]))


def test_refresh_token_introspection(op, alice_agent, web_client, first_client):
    token = alice_agent.tokens(web_client)
    own = op.introspect(web_client, token["refresh_token"]).json()
    assert own["active"] is True and own["client_id"] == web_client.client_id
    # A refresh token is only active for the client it was issued to.
    assert op.introspect(first_client, token["refresh_token"]).json()["active"] is False
