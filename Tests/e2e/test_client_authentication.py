"""Client authentication with keys (RFC 7523 §2.2, OpenID Connect Core §9
private_key_jwt) and the Sign-in-with-Apple client_secret shape (an ES256 JWT issued by
the team id, no jti, up to six months long)."""

import time

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from joserfc.jwk import ECKey, RSAKey

from e2e_support import APPLE_TEAM_ID, JWT_BEARER, assert_oauth_error, assert_tokens, make_assertion, random_token

SIX_MONTHS = 15_777_000


def probe(op, data):
    """A token request whose grant is certainly invalid: invalid_grant means the client
    authenticated, invalid_client that it did not."""
    return requests.post(op.endpoint("token_endpoint"),
                         data={"grant_type": "refresh_token", "refresh_token": random_token(), **data}, timeout=10)


def with_assertion(assertion, **extra):
    return {"client_assertion_type": JWT_BEARER, "client_assertion": assertion, **extra}


def apple_secret(op, client, *, lifetime=180 * 86400, iss=APPLE_TEAM_ID, **kw):
    return make_assertion(client, audience=op.issuer, iss=iss, jti=None, lifetime=lifetime, **kw)


def other_key(kind):
    if kind == "EC":
        pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        return ECKey.import_key(pem)
    pem = rsa.generate_private_key(65537, 2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return RSAKey.import_key(pem)


# -- private_key_jwt


@pytest.mark.parametrize("name", ["rsa_jwt", "apple"])
def test_private_key_jwt_code_flow_with_authlib(op, alice_agent, alice, clients, name):
    client = clients(name)
    token_endpoint = op.endpoint("token_endpoint")
    alg = "ES256" if client.private_key.key_type == "EC" else "RS256"
    session = OAuth2Session(client.client_id, client.private_key, scope="openid email",
                            redirect_uri=client.redirect_uri, code_challenge_method="S256",
                            token_endpoint_auth_method="private_key_jwt")
    # Authlib's assertion: aud = the token endpoint URL, a fresh jti each time.
    session.register_client_auth_method(PrivateKeyJWT(token_endpoint, headers={"kid": client.kid}, alg=alg))
    verifier, nonce = generate_token(48), generate_token(20)
    url, _ = session.create_authorization_url(op.endpoint("authorization_endpoint"), code_verifier=verifier, nonce=nonce)
    result = alice_agent.authorize(client, url=url)
    assert result.kind == "redirect" and result.code, result.describe()
    token = session.fetch_token(token_endpoint, authorization_response=result.location, code_verifier=verifier)
    claims = op.verify_id_token(token["id_token"], client, nonce=nonce, access_token=token["access_token"])
    assert claims["sub"] == alice.id
    # The same client can introspect with a new assertion.
    intro = session.introspect_token(op.endpoint("introspection_endpoint"), token=token["access_token"])
    assert intro.json()["active"] is True


def test_private_key_jwt_with_issuer_as_audience(op, alice_agent, rsa_jwt_client):
    result = alice_agent.sign_in(rsa_jwt_client, None)
    r = op.redeem(rsa_jwt_client, result)  # make_assertion: aud = the issuer
    assert_tokens(r)


def test_private_key_jwt_replayed_jti_is_refused(op, rsa_jwt_client):
    assertion = make_assertion(rsa_jwt_client, audience=op.endpoint("token_endpoint"))
    assert_oauth_error(probe(op, with_assertion(assertion)), "invalid_grant")
    assert_oauth_error(probe(op, with_assertion(assertion)), "invalid_client")


@pytest.mark.parametrize("case", ["unregistered key", "wrong aud", "another endpoint as aud", "aud with a stranger",
                                  "expired", "no jti", "lives too long", "wrong iss", "wrong sub", "no exp",
                                  "wrong assertion type", "garbage"])
def test_bad_client_assertion_is_invalid_client(op, rsa_jwt_client, case):
    c = rsa_jwt_client
    aud = op.issuer
    if case == "unregistered key":
        assertion = make_assertion(c, audience=aud, key=other_key("RSA"))
    elif case == "wrong aud":
        assertion = make_assertion(c, audience="https://other.example")
    elif case == "another endpoint as aud":
        # An assertion made for the revocation endpoint must not buy tokens.
        assertion = make_assertion(c, audience=op.endpoint("revocation_endpoint"))
    elif case == "aud with a stranger":
        assertion = make_assertion(c, audience=["https://attacker.example", op.issuer])
    elif case == "no jti":
        # Without jti an assertion could be replayed until it expires.
        assertion = make_assertion(c, audience=aud, jti=None)
    elif case == "lives too long":
        assertion = make_assertion(c, audience=aud, lifetime=180 * 86400)
    elif case == "expired":
        assertion = make_assertion(c, audience=aud, iat=int(time.time()) - 3600, lifetime=600)
    elif case == "wrong iss":
        assertion = make_assertion(c, audience=aud, iss="someone-else")
    elif case == "wrong sub":
        assertion = make_assertion(c, audience=aud, sub="someone-else")
    elif case == "no exp":
        from joserfc import jwt
        assertion = jwt.encode({"alg": "RS256", "kid": c.kid},
                               {"iss": c.client_id, "sub": c.client_id, "aud": aud, "jti": random_token(),
                                "iat": int(time.time())}, c.private_key, algorithms=["RS256"])
    elif case == "wrong assertion type":
        r = probe(op, {"client_assertion_type": "urn:example:other", "client_assertion": make_assertion(c, audience=aud)})
        assert_oauth_error(r, "invalid_client")
        return
    else:
        assertion = "not.a.jwt"
    assert_oauth_error(probe(op, with_assertion(assertion)), "invalid_client")


def test_private_key_jwt_client_cannot_use_a_secret(op, rsa_jwt_client):
    r = probe(op, {"client_id": rsa_jwt_client.client_id, "client_secret": "s" * 43})
    assert_oauth_error(r, "invalid_client")


def test_private_key_jwt_client_without_credentials_is_invalid_client(op, rsa_jwt_client):
    assert_oauth_error(probe(op, {"client_id": rsa_jwt_client.client_id}), "invalid_client")


# -- Sign in with Apple style client_secret


def test_apple_style_client_secret_is_accepted_as_client_secret(op, alice_agent, apple_client):
    secret = apple_secret(op, apple_client)
    result = alice_agent.sign_in(apple_client, None)
    data = {"grant_type": "authorization_code", "code": result.code, "redirect_uri": apple_client.redirect_uri,
            "code_verifier": result.code_verifier, "client_id": apple_client.client_id, "client_secret": secret}
    token = assert_tokens(requests.post(op.endpoint("token_endpoint"), data=data, timeout=10))
    op.verify_id_token(token["id_token"], apple_client, nonce=result.sent["nonce"], access_token=token["access_token"])
    # No jti: the same secret is reused, as Apple's clients do for months.
    again = probe(op, {"client_id": apple_client.client_id, "client_secret": secret})
    assert_oauth_error(again, "invalid_grant")


def test_apple_style_client_secret_is_accepted_as_client_assertion(op, alice_agent, apple_client):
    secret = apple_secret(op, apple_client)
    result = alice_agent.sign_in(apple_client, None)
    data = {"grant_type": "authorization_code", "code": result.code, "redirect_uri": apple_client.redirect_uri,
            "code_verifier": result.code_verifier, **with_assertion(secret)}
    assert_tokens(requests.post(op.endpoint("token_endpoint"), data=data, timeout=10))
    assert_oauth_error(probe(op, with_assertion(secret)), "invalid_grant")


def test_apple_style_client_secret_longer_than_six_months_is_refused(op, apple_client):
    secret = apple_secret(op, apple_client, lifetime=SIX_MONTHS + 86400)
    assert_oauth_error(probe(op, {"client_id": apple_client.client_id, "client_secret": secret}), "invalid_client")
    assert_oauth_error(probe(op, with_assertion(secret)), "invalid_client")


def test_apple_style_client_secret_with_another_team_is_refused(op, apple_client):
    secret = apple_secret(op, apple_client, iss="OTHERTEAM1")
    assert_oauth_error(probe(op, {"client_id": apple_client.client_id, "client_secret": secret}), "invalid_client")


def test_apple_style_client_secret_signed_by_another_key_is_refused(op, apple_client):
    secret = apple_secret(op, apple_client, key=other_key("EC"))
    assert_oauth_error(probe(op, {"client_id": apple_client.client_id, "client_secret": secret}), "invalid_client")


def test_apple_style_client_secret_without_iat_is_refused(op, apple_client):
    from joserfc import jwt
    now = int(time.time())
    secret = jwt.encode({"alg": "ES256", "kid": apple_client.kid},
                        {"iss": APPLE_TEAM_ID, "sub": apple_client.client_id, "aud": op.issuer, "exp": now + 3600},
                        apple_client.private_key, algorithms=["ES256"])
    assert_oauth_error(probe(op, {"client_id": apple_client.client_id, "client_secret": secret}), "invalid_client")


# -- client_credentials


def test_client_credentials_grant(op, service_client):
    r = op.post("token_endpoint", {"grant_type": "client_credentials"}, client=service_client)
    body = assert_tokens(r)
    assert "refresh_token" not in body and "id_token" not in body
    claims = op.verify_access_token(body["access_token"], service_client)
    assert claims["sub"] == service_client.client_id
    assert set(claims["scope"].split()) == {"api.read", "api.write"}
    intro = op.introspect(service_client, body["access_token"]).json()
    assert intro["active"] is True and intro["client_id"] == service_client.client_id
    # No user: userinfo refuses the token.
    assert op.userinfo(body["access_token"]).status_code in (401, 403)


def test_client_credentials_with_a_narrower_scope_and_client_secret_post(op, service_client):
    r = op.post("token_endpoint", {"grant_type": "client_credentials", "scope": "api.read"}, client=service_client,
                auth_method="client_secret_post")
    body = assert_tokens(r)
    assert body.get("scope", "api.read") == "api.read"
    assert op.verify_access_token(body["access_token"], service_client)["scope"] == "api.read"


@pytest.mark.parametrize("scope", ["api.admin", "api.read api.admin", "openid", "offline_access"])
def test_client_credentials_scope_outside_the_allowed_is_invalid_scope(op, service_client, scope):
    r = op.post("token_endpoint", {"grant_type": "client_credentials", "scope": scope}, client=service_client)
    assert_oauth_error(r, "invalid_scope")


def test_client_credentials_for_a_public_client_is_unauthorized_client(op, spa_client):
    r = op.post("token_endpoint", {"grant_type": "client_credentials"}, client=spa_client)
    assert_oauth_error(r, "unauthorized_client")


def test_client_credentials_with_wrong_secret_is_invalid_client(op, service_client):
    r = requests.post(op.endpoint("token_endpoint"), data={"grant_type": "client_credentials"},
                      auth=(service_client.client_id, "w" * 43), timeout=10)
    assert_oauth_error(r, "invalid_client")


def test_client_credentials_token_can_be_revoked(op, service_client):
    body = assert_tokens(op.post("token_endpoint", {"grant_type": "client_credentials"}, client=service_client))
    assert op.revoke(service_client, body["access_token"]).status_code == 200
    assert op.introspect(service_client, body["access_token"]).json()["active"] is False


def test_secret_with_special_characters_in_basic_credentials(op, clients):
    # RFC 6749 §2.3.1: client id and secret are form-encoded before Basic encoding.
    client = clients("special")
    r = op.post("token_endpoint", {"grant_type": "client_credentials"}, client=client, auth_method="client_secret_basic")
    assert op.verify_access_token(assert_tokens(r)["access_token"], client)["sub"] == client.client_id


def test_secret_with_special_characters_through_authlib_client_secret_post(op, clients):
    client = clients("special")
    session = OAuth2Session(client.client_id, client.client_secret, token_endpoint_auth_method="client_secret_post")
    token = session.fetch_token(op.endpoint("token_endpoint"), grant_type="client_credentials")
    assert op.verify_access_token(token["access_token"], client)["sub"] == client.client_id
