"""Cross-app sign-in (docs/cross-app.md): pushed authorization requests (RFC 9126), app-to-app
approval by an authenticator app, hand-off tickets, and Native SSO between sibling apps, all
over HTTP against the real server. The CLI pair (tessera login --authenticator / --approve) is in
test_cli_cross_app.py."""

import json
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from conftest import _secret_client, _user
from e2e_support import (Client, Provider, UserAgent, assert_oauth_error, assert_tokens, half_hash, random_token, s256,
                         unverified_claims)

PAR_URI_PREFIX = "urn:ietf:params:oauth:request_uri:"
DEVICE_SECRET_TYPE = "urn:openid:params:token-type:device-secret"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


# -- the cast: an operator's authenticator app, partner apps, and a vendor's sibling apps


@pytest.fixture(scope="module")
def cast(cli, callback):
    cb = callback.base + "/cb"
    return {
        "authenticator": _secret_client(cli, "Operator Bank", redirect_uris=[cb], public=True, first_party=True,
                                        authenticator=True, ios_apps=["ABCDE12345.com.example.bank"]),
        "partner": _secret_client(cli, "Partner Shop", redirect_uris=[cb], public=True),
        "partner_confidential": _secret_client(cli, "Partner Travel", redirect_uris=[cb]),
        "strict": _secret_client(cli, "Strict Partner", redirect_uris=[cb], public=True, require_par=True),
        "sibling_a": _secret_client(cli, "Acme Mail", redirect_uris=[cb], public=True, first_party=True,
                                    device_sso_group="acme",
                                    scopes=["openid", "profile", "email", "offline_access", "device_sso"]),
        "sibling_b": _secret_client(cli, "Acme Calendar", redirect_uris=[cb], public=True, first_party=True,
                                    device_sso_group="acme", scopes=["openid", "profile", "email", "offline_access"]),
        "stranger": _secret_client(cli, "Other Vendor", redirect_uris=[cb], public=True, first_party=True,
                                   device_sso_group="other", scopes=["openid", "email"]),
        "user": _user(cli, f"crossapp-{random_token(6).lower()}@example.com", "Pat Cross"),
        "other_user": _user(cli, f"crossapp-{random_token(6).lower()}@example.com", "Sam Other"),
        "new_user": _user(cli, f"crossapp-{random_token(6).lower()}@example.com", "Nina New"),
    }


def push(op: Provider, client: Client, **params) -> requests.Response:
    """Pushes an authorization request (RFC 9126); returns the answer and keeps the verifier on it."""
    verifier = random_token(48)
    data = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
            "scope": "openid profile email", "state": random_token(12), "nonce": random_token(12),
            "code_challenge": s256(verifier), "code_challenge_method": "S256"}
    data.update({k: v for k, v in params.items() if v is not None})
    for k in [k for k, v in params.items() if v is None]:
        data.pop(k, None)
    auth = (client.client_id, client.client_secret) if client.client_secret else None
    response = requests.post(op.config["pushed_authorization_request_endpoint"], data=data, auth=auth, timeout=30)
    response.verifier = verifier
    response.sent = data
    return response


def pushed_uri(op: Provider, client: Client, **params) -> tuple[str, requests.Response]:
    response = push(op, client, **params)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["request_uri"].startswith(PAR_URI_PREFIX)
    return body["request_uri"], response


def link(op: Provider, client: Client, request_uri: str) -> str:
    """The universal link a partner app opens: the authorization endpoint with client_id and request_uri only."""
    return op.config["authorization_endpoint"] + "?" + urlencode({"client_id": client.client_id, "request_uri": request_uri})


def app_token(op: Provider, cast: dict, user=None, **params) -> dict:
    """The authenticator app signs its user in (the hosted page here; any sign-in gives such a token)."""
    return UserAgent(op).tokens(cast["authenticator"], user or cast["user"], **params)


def app_call(op: Provider, endpoint: str, token: str | None, **data) -> requests.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.post(op.config[endpoint], data=data, headers=headers, timeout=30)


def redirect_params(location: str) -> dict:
    return {k: v[-1] for k, v in parse_qs(urlsplit(location).query).items()}


# -- discovery


def test_discovery_names_the_cross_app_endpoints(op):
    config = op.config
    for name in ("pushed_authorization_request_endpoint", "pushed_request_details_endpoint",
                 "authorization_approval_endpoint", "handoff_endpoint"):
        assert config[name].startswith(op.issuer + "/"), name
    assert config["require_pushed_authorization_requests"] is False
    assert config["native_sso_supported"] is True
    assert "device_sso" in config["scopes_supported"]
    assert TOKEN_EXCHANGE in config["grant_types_supported"]


# -- pushed authorization requests (RFC 9126)


def test_a_pushed_request_signs_in_through_the_hosted_page(op, cast):
    partner = cast["partner"]
    uri, pushed = pushed_uri(op, partner)
    assert pushed.json()["expires_in"] == 90
    assert pushed.headers["Cache-Control"] == "no-store"
    result = UserAgent(op).authorize(partner, user=cast["user"], url=link(op, partner, uri), consent="allow")
    assert result.kind == "redirect" and result.code, result.describe()
    assert result.params["state"] == pushed.sent["state"]
    tokens = assert_tokens(op.redeem_code(partner, result.code, pushed.verifier, redirect_uri=partner.redirect_uri))
    claims = op.verify_id_token(tokens["id_token"], partner, nonce=pushed.sent["nonce"])
    assert claims["sub"] == cast["user"].id


def test_a_request_uri_works_once(op, cast):
    partner = cast["partner"]
    uri, _ = pushed_uri(op, partner)
    first = UserAgent(op).authorize(partner, url=link(op, partner, uri))
    assert first.kind == "login", first.describe()
    again = UserAgent(op).authorize(partner, url=link(op, partner, uri))
    assert again.kind == "error_page" and again.response.status_code == 400
    assert "invalid_request_uri" in again.page.text


def test_a_request_uri_is_bound_to_the_client_that_pushed_it(op, cast):
    uri, _ = pushed_uri(op, cast["partner"])
    stolen = UserAgent(op).authorize(cast["strict"], url=link(op, cast["strict"], uri))
    assert stolen.kind == "error_page" and "invalid_request_uri" in stolen.page.text
    # The refusal did not use it up: its own client still can.
    own = UserAgent(op).authorize(cast["partner"], url=link(op, cast["partner"], uri))
    assert own.kind == "login", own.describe()


def test_a_request_uri_without_client_id_is_refused(op, cast):
    uri, _ = pushed_uri(op, cast["partner"])
    response = requests.get(op.config["authorization_endpoint"], params={"request_uri": uri}, allow_redirects=False, timeout=30)
    assert response.status_code == 400 and "client_id" in response.text


def test_a_request_uri_expires(op, cast, start_server):
    short = start_server(env={"TESSERA_PUSHED_REQUEST_LIFETIME": "1s"}, name="par-short")
    provider = Provider(short.issuer)
    uri, pushed = pushed_uri(provider, cast["partner"])
    assert pushed.json()["expires_in"] == 1
    time.sleep(2.1)
    result = UserAgent(provider).authorize(cast["partner"], url=link(provider, cast["partner"], uri))
    assert result.kind == "error_page" and "invalid_request_uri" in result.page.text


def test_pushes_count_as_sign_ins_started(cli, callback, start_server):
    """Anyone can push for a public client: pushes count against the client's (and the address's)
    share of sign-ins started. The counters live in the shared database, so this uses a client of
    its own on a node with a low per-client share."""
    limited = _secret_client(cli, "Limited Pusher", redirect_uris=[callback.base + "/cb"], public=True)
    tight = start_server(env={"TESSERA_FLOWS_PER_CLIENT": "2"}, name="par-tight")
    provider = Provider(tight.issuer)
    uri, _ = pushed_uri(provider, limited)
    pushed_uri(provider, limited)
    assert_oauth_error(push(provider, limited), "temporarily_unavailable", 429)
    # Opening a pushed request does not count it a second time.
    result = UserAgent(provider).authorize(limited, url=link(provider, limited, uri))
    assert result.kind == "login", result.describe()


@pytest.mark.parametrize("change, error", [
    ({"redirect_uri": "https://evil.example/cb"}, "invalid_request"),
    ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"scope": "openid maindoc"}, "invalid_scope"),
    ({"request_uri": PAR_URI_PREFIX + "nested"}, "invalid_request"),
    ({"client_id": "someone-else"}, "invalid_client"),
])
def test_a_bad_pushed_request_is_refused_at_once(op, cast, change, error):
    response = push(op, cast["partner"], **change)
    assert_oauth_error(response, error)


def test_pushing_needs_client_authentication(op, cast):
    client = cast["partner_confidential"]
    wrong = Client(client.client_id, "not-the-secret-" + "x" * 20, client.redirect_uris, client.registration)
    assert_oauth_error(push(op, wrong), "invalid_client", 401)
    uri, _ = pushed_uri(op, client)
    assert uri.startswith(PAR_URI_PREFIX)


def test_a_client_that_requires_par_is_refused_a_plain_request(op, cast):
    strict = cast["strict"]
    plain = UserAgent(op).authorize(strict)
    assert plain.kind == "redirect" and plain.params["error"] == "invalid_request", plain.describe()
    assert "push" in plain.params["error_description"]
    uri, _ = pushed_uri(op, strict)
    pushed = UserAgent(op).authorize(strict, url=link(op, strict, uri))
    assert pushed.kind == "login", pushed.describe()


# -- app-to-app: the authenticator app approves a partner's pushed request


def test_the_authenticator_app_approves_a_partner_request(op, cast):
    partner, user = cast["partner"], cast["user"]
    token = app_token(op, cast)["access_token"]
    uri, pushed = pushed_uri(op, partner, scope="openid profile email")
    details = app_call(op, "pushed_request_details_endpoint", token, request_uri=uri)
    assert details.status_code == 200, details.text
    shown = details.json()
    assert shown["client_id"] == partner.client_id and shown["client_name"] == "Partner Shop"
    assert shown["user_email"] == user.email
    assert {s["scope"] for s in shown["scopes"]} >= {"profile", "email"}
    assert all(s["description"] for s in shown["scopes"])
    assert shown["reauthentication_required"] is False
    approved = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow")
    assert approved.status_code == 200, approved.text
    location = approved.json()["redirect_to"]
    assert location.startswith(partner.redirect_uri + "?")
    answer = redirect_params(location)
    assert answer["state"] == pushed.sent["state"] and answer["iss"] == op.issuer
    tokens = assert_tokens(op.redeem_code(partner, answer["code"], pushed.verifier, redirect_uri=partner.redirect_uri))
    claims = op.verify_id_token(tokens["id_token"], partner, nonce=pushed.sent["nonce"])
    assert claims["sub"] == user.id
    # Used once: the browser fallback and a second approval both find it gone.
    again = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow")
    assert_oauth_error(again, "invalid_request_uri", 400)
    browser = UserAgent(op).authorize(partner, url=link(op, partner, uri))
    assert browser.kind == "error_page"


def test_the_app_is_shown_every_scope_the_partner_asks_for(op, cast, cli, callback):
    """A partner's own API scopes are approved too, so the person must see them: none is left
    out because the catalogue doesn't describe it."""
    partner = _secret_client(cli, "Partner API", redirect_uris=[callback.base + "/cb"], public=True,
                             scopes=["openid", "email", "orders.write"])
    token = app_token(op, cast)["access_token"]
    uri, _ = pushed_uri(op, partner, scope="openid email orders.write")
    shown = app_call(op, "pushed_request_details_endpoint", token, request_uri=uri).json()
    scopes = {s["scope"]: s for s in shown["scopes"]}
    assert set(scopes) >= {"email", "orders.write"}, shown
    assert scopes["orders.write"]["description"] and scopes["orders.write"]["consent_required"] is True, scopes
    # The admin scope is no partner's to ask for: registering one with it is refused.
    with pytest.raises(RuntimeError, match="first-party"):
        cli.run("clients", "add", "--name", "Partner Admin", "--public", "--redirect-uri", callback.base + "/cb",
                "--scope", "openid", "--scope", "tessera:admin")


def test_the_person_can_deny_in_the_app(op, cast):
    partner = cast["partner"]
    token = app_token(op, cast)["access_token"]
    uri, pushed = pushed_uri(op, partner)
    denied = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="deny")
    answer = redirect_params(denied.json()["redirect_to"])
    assert answer["error"] == "access_denied" and answer["state"] == pushed.sent["state"] and "code" not in answer


def test_approval_consent_is_remembered_for_the_hosted_page(op, cast):
    """Allowing in the app is consent, recorded as on the hosted page: the next browser sign-in asks nothing."""
    partner, user = cast["partner_confidential"], cast["other_user"]
    token = app_token(op, cast, user=user)["access_token"]
    uri, _ = pushed_uri(op, partner, scope="openid email")
    assert app_call(op, "pushed_request_details_endpoint", token, request_uri=uri).json()["consent_required"] is True
    assert app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow").status_code == 200
    result = UserAgent(op).authorize(partner, user=user, scope="openid email", consent=None)
    assert result.kind == "redirect" and result.code and "consent" not in result.seen, result.describe()


@pytest.mark.parametrize("decision", ["maybe", None])
def test_a_decision_is_allow_or_deny(op, cast, decision):
    token = app_token(op, cast)["access_token"]
    uri, _ = pushed_uri(op, cast["partner"])
    answer = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, **({"decision": decision} if decision else {}))
    assert_oauth_error(answer, "invalid_request", 400)


def test_only_an_authenticator_app_may_approve(op, cast):
    uri, _ = pushed_uri(op, cast["partner"])
    not_an_authenticator = UserAgent(op).tokens(cast["sibling_b"], cast["user"])["access_token"]
    refused = app_call(op, "authorization_approval_endpoint", not_an_authenticator, request_uri=uri, decision="allow")
    assert refused.status_code == 403 and refused.json()["error"] == "unauthorized_client"
    assert "error=\"unauthorized_client\"" in refused.headers["WWW-Authenticate"]
    anonymous = app_call(op, "authorization_approval_endpoint", None, request_uri=uri, decision="allow")
    assert anonymous.status_code == 401 and anonymous.json()["error"] == "invalid_token"
    forged = app_call(op, "pushed_request_details_endpoint", "eyJhbGciOiJub25lIn0.e30.", request_uri=uri)
    assert forged.status_code == 401


def test_an_app_sign_in_older_than_max_age_must_sign_in_again(op, cast):
    partner = cast["partner"]
    # max_age leaves a fresh sign-in a few seconds to reach the approval, even on a busy machine.
    token = app_token(op, cast)["access_token"]
    time.sleep(5.1)
    uri, pushed = pushed_uri(op, partner, max_age="5")
    shown = app_call(op, "pushed_request_details_endpoint", token, request_uri=uri).json()
    assert shown["reauthentication_required"] is True and shown["max_age"] == 5
    refused = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow")
    assert_oauth_error(refused, "login_required", 400)
    # Not used up: after a new sign-in in the app, the same request is approved.
    fresh = app_token(op, cast)["access_token"]
    approved = app_call(op, "authorization_approval_endpoint", fresh, request_uri=uri, decision="allow")
    assert approved.status_code == 200, approved.text
    code = redirect_params(approved.json()["redirect_to"])["code"]
    tokens = assert_tokens(op.redeem_code(partner, code, pushed.verifier, redirect_uri=partner.redirect_uri))
    auth_time = op.verify_id_token(tokens["id_token"], partner, nonce=pushed.sent["nonce"])["auth_time"]
    assert time.time() - auth_time < 10


def test_prompt_login_needs_a_sign_in_after_the_request(op, cast):
    token = app_token(op, cast)["access_token"]
    time.sleep(1.1)
    uri, _ = pushed_uri(op, cast["partner"], prompt="login")
    refused = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow")
    assert_oauth_error(refused, "login_required", 400)


def test_a_request_for_another_user_is_not_approved(op, cast):
    partner = cast["partner"]
    other = UserAgent(op).tokens(partner, cast["other_user"])
    token = app_token(op, cast)["access_token"]
    uri, _ = pushed_uri(op, partner, id_token_hint=other["id_token"])
    refused = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow")
    assert_oauth_error(refused, "login_required", 400)


def test_acr_values_are_honoured_in_the_app_and_on_the_hosted_page(op, cast):
    """acr_values are voluntary and put acr in the ID token; an essential acr nothing here reaches
    is refused at once: pushed, it never reaches the authenticator app."""
    partner = cast["partner"]
    assert op.config["acr_values_supported"] == ["urn:tessera:acr:1fa", "urn:tessera:acr:mfa", "phr", "phrh"]
    token = app_token(op, cast)["access_token"]
    uri, pushed = pushed_uri(op, partner, acr_values="urn:example:loa3 urn:tessera:acr:1fa")
    approved = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow")
    code = redirect_params(approved.json()["redirect_to"])["code"]
    tokens = assert_tokens(op.redeem_code(partner, code, pushed.verifier, redirect_uri=partner.redirect_uri))
    assert op.verify_id_token(tokens["id_token"], partner, nonce=pushed.sent["nonce"])["acr"] == "urn:tessera:acr:1fa"
    plain = UserAgent(op).tokens(cast["sibling_b"], cast["user"])
    assert "acr" not in unverified_claims(plain["id_token"])
    essential = json.dumps({"id_token": {"acr": {"essential": True, "values": ["urn:example:mfa"]}}})
    assert_oauth_error(push(op, partner, claims=essential), "unmet_authentication_requirements", 400)
    hosted = UserAgent(op).authorize(cast["sibling_b"], claims=essential)
    assert hosted.kind == "redirect" and hosted.params["error"] == "unmet_authentication_requirements", hosted.describe()
    reachable = json.dumps({"id_token": {"acr": {"essential": True, "values": ["urn:tessera:acr:1fa"]}}})
    met = UserAgent(op).tokens(cast["sibling_b"], cast["user"], claims=reachable)
    assert unverified_claims(met["id_token"])["acr"] == "urn:tessera:acr:1fa"
    # A class this server has but the app's sign-in (a password) didn't reach: the approval is
    # refused, and the request stays for a sign-in that reaches it.
    phishing_resistant = json.dumps({"id_token": {"acr": {"essential": True, "values": ["phr"]}}})
    uri, _ = pushed_uri(op, partner, claims=phishing_resistant)
    refused = app_call(op, "authorization_approval_endpoint", token, request_uri=uri, decision="allow")
    assert_oauth_error(refused, "unmet_authentication_requirements", 400)
    assert "phr" in refused.json()["error_description"]


def test_form_post_requests_are_left_to_the_browser(op, cast):
    token = app_token(op, cast)["access_token"]
    uri, _ = pushed_uri(op, cast["partner"], response_mode="form_post")
    answer = app_call(op, "pushed_request_details_endpoint", token, request_uri=uri)
    assert_oauth_error(answer, "invalid_request", 400)
    assert "browser" in answer.json()["error_description"]


def test_the_authenticator_app_claims_the_authorize_links(op, cast):
    association = requests.get(op.issuer + "/.well-known/apple-app-site-association", timeout=30).json()
    details = association["applinks"]["details"]
    claiming = [d for d in details if "ABCDE12345.com.example.bank" in d["appIDs"]]
    assert claiming, details
    paths = [c["/"] for c in claiming[0]["components"]]
    assert "/authorize" in paths
    assert details.index(claiming[0]) == 0


# -- hand-off tickets


def handoff(op, token: str, client: Client) -> str:
    answer = app_call(op, "handoff_endpoint", token, client_id=client.client_id)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["expires_in"] == 60
    return body["handoff_ticket"]


def test_a_handoff_ticket_signs_in_without_a_page(op, cast):
    partner, user = cast["sibling_b"], cast["user"]  # first-party: no consent to ask
    token = app_token(op, cast)["access_token"]
    ticket = handoff(op, token, partner)
    result = UserAgent(op).authorize(partner, handoff_ticket=ticket, consent=None)
    assert result.kind == "redirect" and result.code and result.seen == [], result.describe()
    tokens = assert_tokens(op.redeem(partner, result))
    assert op.verify_id_token(tokens["id_token"], partner, nonce=result.sent["nonce"])["sub"] == user.id
    # Used once.
    again = UserAgent(op).authorize(partner, handoff_ticket=ticket)
    assert again.kind == "redirect" and again.params["error"] == "login_required", again.describe()


def test_a_handoff_ticket_is_useless_to_another_app(op, cast):
    token = app_token(op, cast)["access_token"]
    ticket = handoff(op, token, cast["sibling_b"])
    stolen = UserAgent(op).authorize(cast["sibling_a"], handoff_ticket=ticket)
    assert stolen.kind == "redirect" and stolen.params["error"] == "login_required", stolen.describe()
    assert "code" not in stolen.params


def test_a_handoff_ticket_with_prompt_none_asks_for_consent_first(op, cast):
    """A third-party partner needs consent: prompt=none says so and leaves the ticket unused; the
    same ticket in a browser then shows the consent page and signs in to that partner only."""
    partner = cast["partner"]
    token = app_token(op, cast, user=cast["new_user"])["access_token"]
    ticket = handoff(op, token, partner)
    silent = UserAgent(op).authorize(partner, handoff_ticket=ticket, prompt="none")
    assert silent.kind == "redirect" and silent.params["error"] == "consent_required", silent.describe()
    browser = UserAgent(op)
    shown = browser.authorize(partner, handoff_ticket=ticket, consent="allow")
    assert shown.kind == "redirect" and shown.code and shown.seen == ["consent"], shown.describe()
    claims = op.verify_id_token(assert_tokens(op.redeem(partner, shown))["id_token"], partner, nonce=shown.sent["nonce"])
    assert claims["sub"] == cast["new_user"].id
    # No browser session came of it: the browser is signed in to nothing else.
    assert browser.cookie("tessera_session") is None
    elsewhere = browser.authorize(cast["sibling_b"], prompt="none")
    assert elsewhere.kind == "redirect" and elsewhere.params["error"] == "login_required", elsewhere.describe()


def test_a_handoff_ticket_needing_consent_never_replaces_the_browsers_session(op, cast):
    """Login CSRF: Bob's browser opening a link with Alice's ticket (a partner that needs consent)
    must stay Bob's for every other app; the code carries the authenticator's real sign-in (its
    time and methods), not a fresh one."""
    bob, alice, partner = cast["other_user"], cast["new_user"], cast["partner"]
    app = app_token(op, cast, user=alice)
    app_sign_in = unverified_claims(app["id_token"])
    time.sleep(2)
    browser = UserAgent(op)
    bob_tokens = browser.tokens(cast["sibling_b"], bob)
    bob_session = browser.cookie("tessera_session").value
    ticket = handoff(op, app["access_token"], partner)
    shown = browser.authorize(partner, handoff_ticket=ticket, prompt="consent", consent="allow")
    assert shown.kind == "redirect" and shown.code and shown.seen == ["consent"], shown.describe()
    claims = op.verify_id_token(assert_tokens(op.redeem(partner, shown))["id_token"], partner, nonce=shown.sent["nonce"])
    assert claims["sub"] == alice.id
    assert claims["auth_time"] == app_sign_in["auth_time"], "the ticket's sign-in time, not the moment it was used"
    assert claims["amr"] == app_sign_in["amr"]
    # The browser is still Bob's, with his own sign-in.
    assert browser.cookie("tessera_session").value == bob_session
    again = browser.authorize(cast["sibling_b"], prompt="none", max_age="30")
    assert again.kind == "redirect" and again.code, again.describe()
    claims = op.verify_id_token(assert_tokens(op.redeem(cast["sibling_b"], again))["id_token"], cast["sibling_b"],
                                nonce=again.sent["nonce"])
    assert claims["sub"] == bob.id == op.verify_id_token(bob_tokens["id_token"], cast["sibling_b"], nonce=bob_tokens["_nonce"])["sub"]


def test_a_handoff_ticket_expires(op, cast, start_server):
    short = start_server(env={"TESSERA_HANDOFF_TICKET_LIFETIME": "1s"}, name="handoff-short")
    provider = Provider(short.issuer)
    token = app_token(provider, cast)["access_token"]
    answer = app_call(provider, "handoff_endpoint", token, client_id=cast["sibling_b"].client_id)
    ticket = answer.json()["handoff_ticket"]
    time.sleep(2.1)
    late = UserAgent(provider).authorize(cast["sibling_b"], handoff_ticket=ticket)
    assert late.kind == "redirect" and late.params["error"] == "login_required", late.describe()


def test_handoff_needs_a_known_partner_and_an_authenticator(op, cast):
    token = app_token(op, cast)["access_token"]
    assert_oauth_error(app_call(op, "handoff_endpoint", token, client_id="no-such-client"), "invalid_request", 400)
    assert_oauth_error(app_call(op, "handoff_endpoint", token), "invalid_request", 400)
    other = UserAgent(op).tokens(cast["sibling_b"], cast["user"])["access_token"]
    assert app_call(op, "handoff_endpoint", other, client_id=cast["partner"].client_id).status_code == 403


# -- Native SSO between sibling apps


def device_sign_in(op, cast) -> dict:
    tokens = UserAgent(op).tokens(cast["sibling_a"], cast["user"], scope="openid profile email offline_access device_sso")
    assert "device_secret" in tokens, tokens
    return tokens


def exchange(op, client: Client, id_token: str, device_secret: str, **extra) -> requests.Response:
    data = {"grant_type": TOKEN_EXCHANGE, "client_id": client.client_id, "subject_token": id_token,
            "subject_token_type": ID_TOKEN_TYPE, "actor_token": device_secret, "actor_token_type": DEVICE_SECRET_TYPE,
            "scope": "openid profile email offline_access", "audience": op.issuer}
    data.update({k: v for k, v in extra.items() if v is not None})
    for k in [k for k, v in extra.items() if v is None]:
        data.pop(k, None)
    return requests.post(op.config["token_endpoint"], data=data, timeout=30)


def test_a_sibling_app_signs_in_with_the_device_secret(op, cast):
    first = device_sign_in(op, cast)
    claims = unverified_claims(first["id_token"])
    assert claims["ds_hash"] == half_hash(first["device_secret"]) and claims["sid"]
    answer = exchange(op, cast["sibling_b"], first["id_token"], first["device_secret"])
    second = assert_tokens(answer)
    assert second["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    assert "device_secret" not in second
    sibling_claims = op.verify_id_token(second["id_token"], cast["sibling_b"])
    assert sibling_claims["sub"] == cast["user"].id and sibling_claims["sid"] == claims["sid"]
    assert sibling_claims["auth_time"] == claims["auth_time"]
    assert op.userinfo(second["access_token"]).json()["sub"] == cast["user"].id
    # Any app of the group holding the sibling's ID token can go on the same way.
    third = assert_tokens(exchange(op, cast["sibling_a"], second["id_token"], first["device_secret"]))
    assert op.verify_id_token(third["id_token"], cast["sibling_a"])["sub"] == cast["user"].id


@pytest.mark.parametrize("problem", ["secret", "id_token", "type", "audience"])
def test_a_bad_exchange_is_refused(op, cast, problem):
    first = device_sign_in(op, cast)
    id_token, secret = first["id_token"], first["device_secret"]
    if problem == "secret":
        assert_oauth_error(exchange(op, cast["sibling_b"], id_token, random_token(32)), "invalid_grant", 400)
    elif problem == "id_token":
        other = device_sign_in(op, cast)  # another device session: its ID token names another sid and secret
        assert_oauth_error(exchange(op, cast["sibling_b"], other["id_token"], secret), "invalid_grant", 400)
        header, payload, signature = id_token.split(".")
        assert_oauth_error(exchange(op, cast["sibling_b"], f"{header}.{payload}.{signature[:-4]}AAAA", secret),
                           "invalid_grant", 400)
    elif problem == "type":
        assert_oauth_error(exchange(op, cast["sibling_b"], id_token, secret, actor_token_type="urn:example:other"),
                           "invalid_request", 400)
    else:
        assert_oauth_error(exchange(op, cast["sibling_b"], id_token, secret, audience="https://elsewhere.example"),
                           "invalid_target", 400)


def test_only_the_group_may_exchange(op, cast):
    first = device_sign_in(op, cast)
    assert_oauth_error(exchange(op, cast["stranger"], first["id_token"], first["device_secret"], scope="openid email"),
                       "invalid_grant", 400)
    outsider = exchange(op, cast["partner"], first["id_token"], first["device_secret"], scope="openid")
    assert_oauth_error(outsider, "unauthorized_client")


def test_signing_out_ends_the_device_session_for_every_app(op, cast):
    first = device_sign_in(op, cast)
    second = assert_tokens(exchange(op, cast["sibling_b"], first["id_token"], first["device_secret"]))
    # Sign-out in one app: it revokes the device secret (RFC 7009).
    revoked = requests.post(op.config["revocation_endpoint"], timeout=30,
                            data={"token": first["device_secret"], "token_type_hint": "device_secret",
                                  "client_id": cast["sibling_b"].client_id})
    assert revoked.status_code == 200
    for client, tokens in ((cast["sibling_a"], first), (cast["sibling_b"], second)):
        assert_oauth_error(op.refresh(client, tokens["refresh_token"]), "invalid_grant", 400)
        assert op.userinfo(tokens["access_token"]).status_code == 401
    assert_oauth_error(exchange(op, cast["sibling_b"], first["id_token"], first["device_secret"]), "invalid_grant", 400)


def test_rp_initiated_logout_with_a_device_id_token_asks_before_ending_the_device_session(op, cast):
    """Anyone may hold an ID token of a device session (expired ones are hints too): sent alone,
    with no browser session, it only brings the confirmation page; the person's confirmation
    ends the device session for every app."""
    first = device_sign_in(op, cast)
    second = assert_tokens(exchange(op, cast["sibling_b"], first["id_token"], first["device_secret"]))
    stranger = requests.Session()
    page = stranger.get(op.config["end_session_endpoint"], params={"id_token_hint": second["id_token"]}, timeout=30)
    assert page.status_code == 200 and 'action="/logout"' in page.text, page.text[:300]
    refreshed = assert_tokens(op.refresh(cast["sibling_a"], first["refresh_token"]))
    assert_tokens(exchange(op, cast["sibling_b"], first["id_token"], first["device_secret"]))
    # A forged confirmation (no CSRF token of this browser) ends nothing either.
    forged = stranger.post(op.config["end_session_endpoint"], data={"id_token_hint": second["id_token"], "confirm": "yes"}, timeout=30)
    assert forged.status_code == 200 and 'action="/logout"' in forged.text
    refreshed = assert_tokens(op.refresh(cast["sibling_a"], refreshed["refresh_token"]))
    done = stranger.post(op.config["end_session_endpoint"], data=parse_form(page.text), timeout=30)
    assert done.status_code == 200, done.text
    assert_oauth_error(op.refresh(cast["sibling_a"], refreshed["refresh_token"]), "invalid_grant", 400)
    assert_oauth_error(exchange(op, cast["sibling_b"], first["id_token"], first["device_secret"]), "invalid_grant", 400)


def test_a_refreshed_id_token_can_be_shared_too(op, cast):
    first = device_sign_in(op, cast)
    refreshed = assert_tokens(op.refresh(cast["sibling_a"], first["refresh_token"]))
    claims = unverified_claims(refreshed["id_token"])
    assert claims["ds_hash"] == half_hash(first["device_secret"]) and claims["sid"] == unverified_claims(first["id_token"])["sid"]
    assert_tokens(exchange(op, cast["sibling_b"], refreshed["id_token"], first["device_secret"]))


def test_confirmed_logout_in_a_signed_in_browser_ends_the_device_session(op, cast):
    """With a provider session in the browser the logout page asks first; confirming ends the device session too."""
    browser = UserAgent(op)
    first = browser.tokens(cast["sibling_a"], cast["user"], scope="openid profile email offline_access device_sso")
    page = browser.http.get(op.config["end_session_endpoint"], params={"id_token_hint": first["id_token"]}, timeout=30)
    assert page.status_code == 200 and 'name="id_token_hint"' in page.text
    form = parse_form(page.text)
    done = browser.http.post(op.config["end_session_endpoint"], data=form, timeout=30)
    assert done.status_code == 200, done.text
    assert_oauth_error(op.refresh(cast["sibling_a"], first["refresh_token"]), "invalid_grant", 400)


def parse_form(html: str) -> dict:
    from e2e_support import parse_page
    form = parse_page(html).form(action="/logout")
    assert form is not None, html[:500]
    return dict(form.fields)


def test_a_handoff_is_not_for_an_authenticator_app(op, cast):
    token = app_token(op, cast)["access_token"]
    refused = app_call(op, "handoff_endpoint", token, client_id=cast["authenticator"].client_id)
    assert_oauth_error(refused, "invalid_request", 400)


def test_the_cross_app_settings_change_through_the_cli(cli, cast):
    client_id = cast["partner_confidential"].client_id
    changed = json.loads(cli.run("clients", "update", client_id, "--require-par", "true", "--json"))
    assert changed["require_pushed_authorization_requests"] is True
    grouped = json.loads(cli.run("clients", "update", client_id, "--device-sso-group", "travel", "--json"))
    assert grouped["device_sso_group"] == "travel"
    back = json.loads(cli.run("clients", "update", client_id, "--device-sso-group", "", "--require-par", "false", "--json"))
    assert "device_sso_group" not in back and back["require_pushed_authorization_requests"] is False
    with pytest.raises(RuntimeError, match="first-party"):
        cli.run("clients", "update", client_id, "--authenticator", "true")


def test_device_sso_needs_a_group(cli):
    with pytest.raises(RuntimeError, match="device-sso-group"):
        cli.add_client("No Group", redirect_uris=["https://app.example/cb"], public=True,
                       scopes=["openid", "device_sso"])
