"""What the tokens say: ID token claims (OpenID Connect Core §2, §3.1.3.6, §5.4),
JWT access tokens (RFC 9068), userinfo, and pairwise subjects (Core §8.1)."""

import time

import pytest
import requests

from e2e_support import half_hash, unverified_header


def test_id_token_has_the_required_claims(op, alice_agent, alice, first_client):
    token = alice_agent.tokens(first_client, scope="openid profile email")
    header, _ = op.verify_jwt(token["id_token"])
    assert header["alg"] == "RS256"
    assert header["kid"] in {k["kid"] for k in op.jwks()["keys"]}
    claims = op.verify_id_token(token["id_token"], first_client, nonce=token["_nonce"], access_token=token["access_token"])
    for name in ("iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "azp", "amr", "sid"):
        assert name in claims, f"ID token lacks {name}: {claims}"
    assert claims["azp"] == first_client.client_id
    assert claims["amr"] == ["pwd"]
    assert claims["auth_time"] <= claims["iat"] <= time.time() + 5
    assert claims["exp"] > claims["iat"]
    assert claims["at_hash"] == half_hash(token["access_token"])
    assert isinstance(claims["sid"], str) and claims["sid"]


@pytest.mark.parametrize("scope, present, absent", [
    ("openid", [], ["email", "email_verified", "name"]),
    ("openid email", ["email", "email_verified"], ["name"]),
    ("openid profile", ["name"], ["email", "email_verified"]),
])
def test_claims_follow_the_granted_scopes(op, alice_agent, alice, first_client, scope, present, absent):
    token = alice_agent.tokens(first_client, scope=scope)
    claims = op.verify_id_token(token["id_token"], first_client)
    info = op.userinfo(token["access_token"])
    assert info.status_code == 200
    for source in (claims, info.json()):
        for name in present:
            assert name in source, f"{name} missing with scope {scope}: {source}"
        for name in absent:
            assert name not in source, f"{name} released without its scope ({scope}): {source}"
    assert info.json()["sub"] == claims["sub"] == alice.id
    if "email" in present:
        assert info.json()["email"] == alice.email and info.json()["email_verified"] is True
    if "name" in present:
        assert info.json()["name"] == alice.name


def test_access_token_is_an_rfc9068_jwt(op, alice_agent, alice, first_client):
    token = alice_agent.tokens(first_client, scope="openid email")
    assert unverified_header(token["access_token"])["typ"] == "at+jwt"
    claims = op.verify_access_token(token["access_token"], first_client)
    assert claims["aud"] == op.issuer or claims["aud"] == [op.issuer]
    assert claims["sub"] == alice.id
    assert set(claims["scope"].split()) == {"openid", "email"}
    assert claims["exp"] - claims["iat"] == token["expires_in"]
    other = alice_agent.tokens(first_client, scope="openid email")
    assert op.verify_access_token(other["access_token"], first_client)["jti"] != claims["jti"]


def test_userinfo_without_a_token_is_401_with_a_bearer_challenge(op):
    r = requests.get(op.endpoint("userinfo_endpoint"), timeout=10)
    assert r.status_code == 401
    assert r.headers["WWW-Authenticate"].lower().startswith("bearer")


def test_userinfo_with_a_bad_token_is_invalid_token(op):
    r = op.userinfo("eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
    assert r.status_code == 401
    assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]


def test_id_token_is_not_an_access_token(op, alice_agent, first_client):
    token = alice_agent.tokens(first_client, scope="openid")
    assert op.userinfo(token["id_token"]).status_code == 401
    intro = op.introspect(first_client, token["id_token"])
    assert intro.json()["active"] is False


def test_pairwise_subject_differs_from_the_public_one_and_is_stable(op, alice_agent, agent, alice, pairwise_client):
    token = alice_agent.tokens(pairwise_client, scope="openid email")
    sub = op.verify_id_token(token["id_token"], pairwise_client)["sub"]
    assert sub != alice.id
    assert op.userinfo(token["access_token"]).json()["sub"] == sub
    assert op.verify_access_token(token["access_token"], pairwise_client)["sub"] == sub
    # Another login, in another browser: the same pairwise sub.
    again = agent.tokens(pairwise_client, user=alice, scope="openid")
    assert op.verify_id_token(again["id_token"], pairwise_client)["sub"] == sub


def test_userinfo_token_in_two_places_is_invalid_request(op, alice_agent, first_client):
    token = alice_agent.tokens(first_client, scope="openid")
    r = requests.post(op.endpoint("userinfo_endpoint"), data={"access_token": token["access_token"]},
                      headers={"Authorization": f"Bearer {token['access_token']}"}, timeout=10)
    assert r.status_code == 400
    assert r.json()["error"] == "invalid_request"
