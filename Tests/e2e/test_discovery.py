"""Discovery (OpenID Connect Discovery 1.0, RFC 8414) and the JWKS."""

import requests


def test_discovery_document_describes_the_provider(op, server):
    config = op.config
    assert config["issuer"] == server.issuer
    for name in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "revocation_endpoint",
                 "introspection_endpoint", "end_session_endpoint"):
        assert config[name].startswith(server.issuer + "/"), name
    assert config["response_types_supported"] == ["code"]
    assert set(config["response_modes_supported"]) == {"query", "fragment", "form_post"}
    assert config["code_challenge_methods_supported"] == ["S256"]
    assert {"authorization_code", "refresh_token", "client_credentials"} <= set(config["grant_types_supported"])
    assert {"client_secret_basic", "client_secret_post", "private_key_jwt", "none"} <= set(
        config["token_endpoint_auth_methods_supported"])
    assert "RS256" in config["id_token_signing_alg_values_supported"]
    assert {"public", "pairwise"} <= set(config["subject_types_supported"])
    assert config["authorization_response_iss_parameter_supported"] is True
    assert config["request_parameter_supported"] is False
    assert config["request_uri_parameter_supported"] is False
    assert {"openid", "profile", "email", "offline_access"} <= set(config["scopes_supported"])
    assert {"en", "ru"} <= set(config["ui_locales_supported"])


def test_oauth_authorization_server_metadata_is_the_same_document(op, server):
    r = requests.get(server.issuer + "/.well-known/oauth-authorization-server", timeout=10)
    assert r.status_code == 200
    assert r.json() == op.config


def test_jwks_publishes_the_current_and_next_public_keys(op):
    keys = op.jwks()["keys"]
    assert len(keys) >= 2, "the next key should be published ahead of rotation"
    kids = [k["kid"] for k in keys]
    assert len(set(kids)) == len(kids)
    for key in keys:
        assert key["kty"] in ("RSA", "EC", "OKP")
        for private in ("d", "p", "q", "dp", "dq", "qi"):
            assert private not in key, "a private key part is published"
