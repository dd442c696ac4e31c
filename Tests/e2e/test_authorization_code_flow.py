"""The authorization code flow end to end with an independent OIDC client (Authlib):
PKCE, nonce, ID token verification against the JWKS, userinfo, refresh with rotation,
revocation and introspection, for client_secret_basic, client_secret_post and a
public client."""

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

from e2e_support import assert_oauth_error, half_hash


def authlib_session(op, client, auth_method, scope="openid profile email offline_access"):
    return OAuth2Session(client.client_id, client.client_secret, scope=scope, redirect_uri=client.redirect_uri,
                         code_challenge_method="S256", token_endpoint_auth_method=auth_method)


def run_code_flow(op, agent, client, auth_method):
    """Authlib builds the request and redeems the code; the user agent walks the pages."""
    session = authlib_session(op, client, auth_method)
    verifier, nonce = generate_token(48), generate_token(20)
    url, state = session.create_authorization_url(op.endpoint("authorization_endpoint"), code_verifier=verifier,
                                                  nonce=nonce)
    result = agent.authorize(client, url=url)
    assert result.kind == "redirect" and result.code, result.describe()
    assert result.params["state"] == state
    assert result.params["iss"] == op.issuer
    token = session.fetch_token(op.endpoint("token_endpoint"), authorization_response=result.location,
                                code_verifier=verifier)
    return session, token, nonce


@pytest.mark.parametrize("auth_method", ["client_secret_basic", "client_secret_post"])
def test_confidential_client_code_flow_with_pkce(op, alice_agent, alice, web_client, auth_method):
    session, token, nonce = run_code_flow(op, alice_agent, web_client, auth_method)
    assert token["token_type"].lower() == "bearer"
    assert token["expires_in"] > 0
    assert set(token["scope"].split()) == {"openid", "profile", "email", "offline_access"}
    assert token.get("refresh_token")

    # The ID token: signature against the JWKS, iss, aud, nonce, at_hash, and its claims.
    claims = op.verify_id_token(token["id_token"], web_client, nonce=nonce, access_token=token["access_token"])
    assert claims["at_hash"] == half_hash(token["access_token"])
    assert claims["sub"] == alice.id
    assert claims["email"] == alice.email and claims["email_verified"] is True
    assert claims["name"] == alice.name

    # The access token is an RFC 9068 JWT.
    access = op.verify_access_token(token["access_token"], web_client)
    assert access["sub"] == alice.id

    # Userinfo: GET with the Bearer header, POST with the header, POST with the form body.
    userinfo = op.endpoint("userinfo_endpoint")
    got = session.get(userinfo)
    assert got.status_code == 200, got.text
    assert got.json()["sub"] == claims["sub"]
    assert got.json()["email"] == alice.email
    posted = session.post(userinfo)
    assert posted.status_code == 200 and posted.json() == got.json()
    form = requests.post(userinfo, data={"access_token": token["access_token"]}, timeout=10)
    assert form.status_code == 200 and form.json() == got.json()

    # Introspection by the client itself.
    intro = session.introspect_token(op.endpoint("introspection_endpoint"), token=token["access_token"])
    assert intro.status_code == 200, intro.text
    assert intro.json()["active"] is True
    assert intro.json()["client_id"] == web_client.client_id
    assert intro.json()["sub"] == alice.id

    # Refresh with rotation: a new refresh token each time; the new access token works.
    old_refresh = token["refresh_token"]
    new = session.refresh_token(op.endpoint("token_endpoint"), refresh_token=old_refresh)
    assert new["refresh_token"] and new["refresh_token"] != old_refresh
    assert new["access_token"] != token["access_token"]
    assert session.get(userinfo).status_code == 200
    if "id_token" in new:
        op.verify_id_token(new["id_token"], web_client, access_token=new["access_token"])

    # Revocation (RFC 7009) of the access token: introspection and userinfo then refuse it.
    revoked = session.revoke_token(op.endpoint("revocation_endpoint"), token=new["access_token"],
                                   token_type_hint="access_token")
    assert revoked.status_code == 200
    intro = session.introspect_token(op.endpoint("introspection_endpoint"), token=new["access_token"])
    assert intro.json() == {"active": False} or intro.json()["active"] is False
    assert op.userinfo(new["access_token"]).status_code == 401

    # Revoking the refresh token revokes the grant: no more refreshing.
    revoked = session.revoke_token(op.endpoint("revocation_endpoint"), token=new["refresh_token"],
                                   token_type_hint="refresh_token")
    assert revoked.status_code == 200
    assert_oauth_error(op.refresh(web_client, new["refresh_token"]), "invalid_grant")


def test_public_client_code_flow_with_pkce(op, alice_agent, alice, spa_client):
    session = OAuth2Session(spa_client.client_id, None, scope="openid email offline_access",
                            redirect_uri=spa_client.redirect_uri, code_challenge_method="S256",
                            token_endpoint_auth_method="none")
    verifier, nonce = generate_token(48), generate_token(20)
    url, state = session.create_authorization_url(op.endpoint("authorization_endpoint"), code_verifier=verifier,
                                                  nonce=nonce)
    result = alice_agent.authorize(spa_client, url=url)
    assert result.kind == "redirect" and result.code, result.describe()
    assert result.params["state"] == state
    token = session.fetch_token(op.endpoint("token_endpoint"), authorization_response=result.location,
                                code_verifier=verifier)
    claims = op.verify_id_token(token["id_token"], spa_client, nonce=nonce, access_token=token["access_token"])
    assert claims["sub"] == alice.id
    assert session.get(op.endpoint("userinfo_endpoint")).json()["email"] == alice.email
    # A public client refreshes with its client_id alone, and the refresh token rotates.
    new = session.refresh_token(op.endpoint("token_endpoint"), refresh_token=token["refresh_token"])
    assert new["refresh_token"] != token["refresh_token"]
    # A public client may revoke its own tokens (RFC 7009 §5) but may not introspect.
    assert session.revoke_token(op.endpoint("revocation_endpoint"), token=new["refresh_token"]).status_code == 200
    assert_oauth_error(op.refresh(spa_client, new["refresh_token"]), "invalid_grant")


def test_public_client_cannot_introspect(op, alice_agent, spa_client):
    token = alice_agent.tokens(spa_client, scope="openid")
    assert_oauth_error(op.introspect(spa_client, token["access_token"]), "invalid_client")


def test_introspection_requires_client_authentication(op, alice_agent, web_client):
    token = alice_agent.tokens(web_client, scope="openid")
    r = requests.post(op.endpoint("introspection_endpoint"), data={"token": token["access_token"]}, timeout=10)
    assert_oauth_error(r, "invalid_client")


def test_introspection_of_an_unknown_token_is_inactive(op, web_client):
    r = op.introspect(web_client, "not-a-token")
    assert r.status_code == 200
    assert r.json() == {"active": False}


def test_revocation_of_an_unknown_token_succeeds(op, web_client):
    r = op.revoke(web_client, "not-a-token")
    assert r.status_code == 200
