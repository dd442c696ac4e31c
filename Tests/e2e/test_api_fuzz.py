"""Schemathesis over the JSON APIs that test_native_auth.py does not cover: the email-link
endpoints (docs/email-link.openapi.json) and the OAuth endpoints — token, introspection,
revocation, userinfo, and cross-app sign-in's pushed requests and authenticator-app endpoints
(docs/oauth.openapi.json). Each document is loaded from docs/ and run
with `schemathesis run` against a `tessera serve` of this module's own (base URL: its
issuer). No answer may be a 5xx, and each must be one its document describes (status code,
content type, headers, body schema), which keeps the documents honest.

The server sends its email to an aiosmtpd relay (smtp_sink.py) and has a Sign in with Apple
upstream played by apple_standin.py. Two clients are registered with the CLI: a public
first-party app (email links) and a confidential first-party service allowed
client_credentials and refresh_token. Before fuzzing, the module gets real credentials the
way apps do — links read from the emails, the tokens of completing them, a
client_credentials token, Apple identity tokens — and checks that these happy-path answers,
which random requests seldom reach, match the documents too. Two rules are checked directly
as well: a parameter sent twice is `invalid_request` (docs/endpoints.md), and a signed client
assertion whose exp, nbf or iat is out of range is `invalid_client` (both found here: the
server once accepted the duplicates, and died of the assertion's arithmetic overflow).

Random requests alone would stop at client authentication. So schemathesis imports this
module as its hooks module (SCHEMATHESIS_HOOKS; the hooks are defined only when
API_FUZZ_SEEDS names the credentials file), and the hooks change three requests in four:
auth providers put the service's HTTP Basic credentials on /token, /introspect and /revoke
(dropping the credentials generated into the body, as two methods at once are refused) and
a real bearer token on /userinfo, on email-link `link` / `reauthenticate` and on the
authenticator app's endpoints (the app client is an authenticator); a hook makes pushes the
partner's (often valid ones), gives details and approvals real pushed `request_uri`s, and puts
the app's `client_id` on the email-link endpoints and, in some requests, a real refresh
token, token, link code or Apple identity token in place of the generated one, so that
requests reach the grants, introspection, revocation and link redemption. The choices
follow from each request's content and the seed is fixed; schemathesis also steers its
generation by the answers (whose tokens differ from run to run), so runs are alike rather
than identical.

The run is bounded: FUZZ_EXAMPLES cases per operation in the fuzzing phase, plus the
examples and coverage phases. The cases per operation and the statuses answered are printed
(pytest -s); the NDJSON and JUnit reports stay in the session's workdir."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import uuid
import zlib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import ECKey

from apple_standin import AppleStandIn
from e2e_support import new_database, CLI, ROOT, TesseraServer, random_token, s256
from smtp_sink import SMTPSink

EMAIL_LINK_DOC = ROOT / "docs" / "email-link.openapi.json"
OAUTH_DOC = ROOT / "docs" / "oauth.openapi.json"
APP = "fuzz-link-app"
APP_REDIRECT = "https://app.example.com/callback"
PARTNER = "fuzz-partner"
# Half for approvals, which use one up whether or not the case can succeed (no bearer, another
# field broken): with 10, one run in many had no approval answered 200.
PUSHED_FOR_FUZZING = 60
SERVICE = "fuzz-service"
SERVICE_SECRET = "api-fuzz-service-secret-0123456789-abcdefgh"
SERVICE_SCOPES = ["openid", "email", "offline_access", "api.read"]
USER_SCOPE = "openid email offline_access"
APPLE_TEAM = "FUZZTEAM01"
APPLE_KEY_ID = "FUZZKEY001"
APPLE_APP = "com.example.fuzz"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SEEDS_ENV = "API_FUZZ_SEEDS"
SERVER_ENV = {"TESSERA_LOGIN_FAILURES_PER_ADDRESS": "1000", "TESSERA_LOG_LEVEL": "info",
              # every request comes from 127.0.0.1: the per-address hourly limit must not get in the way; the
              # per-email one stays, so that addresses generated again and again meet 429 slow_down
              "TESSERA_OTP_PER_ADDRESS_PER_HOUR": "100000",
              # pushed authorization requests count as sign-ins started, per address too
              "TESSERA_FLOWS_PER_ADDRESS": "100000"}
FUZZ_EXAMPLES = 100
FUZZ_SEED = "20261125"
LINKS_FOR_FUZZING = 20
APPLE_SIGN_INS_FOR_FUZZING = 8
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,"
          "response_schema_conformance")
OOB_CODE = re.compile(r"[?&]oob_code=([A-Za-z0-9_\-]+)")
CLIENT_AUTH_FIELDS = ("client_id", "client_secret", "client_assertion", "client_assertion_type")


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:12]}@example.com"


def basic(client_id: str, secret: str) -> str:
    """`Authorization: Basic` with the id and secret form-encoded (RFC 6749 §2.3.1)."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


# ---------------------------------------------------------------------------
# The server, its relay, its Apple, its clients


@pytest.fixture(scope="module", autouse=True)
def _register_early():
    """Overrides the session's: this module brings its own server, so the shared one and its
    background registrations are not started for it."""
    yield


@pytest.fixture(scope="module")
def apple(workdir):
    standin = AppleStandIn().start()
    standin.register_client(APPLE_APP, APPLE_TEAM)
    key_path = standin.generate_team_key(workdir, APPLE_TEAM, APPLE_KEY_ID)
    yield standin, key_path
    standin.stop()


@pytest.fixture(scope="module")
def server(binary, workdir, sink, apple):
    standin, key_path = apple
    config = workdir / "api-fuzz-config.json"
    config.write_text(json.dumps({"upstream_providers": [
        {"id": "apple", "type": "apple", "name": "Apple", "client_id": "com.example.fuzz.web", "team_id": APPLE_TEAM,
         "key_id": APPLE_KEY_ID, "private_key_path": str(key_path), "native_client_ids": [APPLE_APP], **standin.endpoints}]}))
    database = new_database(workdir, "api-fuzz")
    cli = CLI(binary, database, workdir)
    # The schema first (the CLI creates it), then the server and the other client at the same time.
    # The app is the operator's authenticator too: its users' tokens reach the approval endpoints.
    cli.add_client("Fuzz Link App", client_id=APP, public=True, first_party=True, authenticator=True,
                   redirect_uris=[APP_REDIRECT])
    srv = TesseraServer(binary, database, workdir, env=SERVER_ENV, name="api-fuzz",
                        args=["--smtp-url", sink.url, "--config", str(config)])
    with ThreadPoolExecutor(1) as pool:
        started = pool.submit(srv.start)
        cli.add_client("Fuzz Service", client_id=SERVICE, secret=SERVICE_SECRET, first_party=True,
                       grant_types=["client_credentials", "refresh_token"], scopes=SERVICE_SCOPES)
        cli.add_client("Fuzz Partner", client_id=PARTNER, public=True, redirect_uris=["com.example.partner:/cb"])
        started.result()
    yield srv
    srv.stop()


def post(server: TesseraServer, path: str, data: dict | list, *, service: bool = False,
         bearer: str | None = None) -> requests.Response:
    """A form POST: as the service (HTTP Basic), or at the email-link endpoints as the app."""
    headers = {}
    if service:
        headers["Authorization"] = basic(SERVICE, SERVICE_SECRET)
    elif isinstance(data, dict) and "client_id" not in data and path.startswith("/emaillink/"):
        data = {"client_id": APP, **data}
    if bearer:
        headers["Authorization"] = "Bearer " + bearer
    return requests.post(server.issuer + path, data=data, headers=headers, timeout=30)


def push(server: TesseraServer, client_id: str, redirect_uri: str, **extra) -> requests.Response:
    """A pushed authorization request (RFC 9126) of a public client, with PKCE."""
    data = {"client_id": client_id, "response_type": "code", "redirect_uri": redirect_uri, "scope": "openid email",
            "code_challenge": s256(random_token(48)), "code_challenge_method": "S256", "state": random_token(8), **extra}
    return requests.post(server.issuer + "/authorize/v1.0/par", data=data, timeout=30)


def send_link(server: TesseraServer, sink: SMTPSink, email: str, *, service: bool = False) -> dict:
    before = len(sink.to(email))
    sent = post(server, "/emaillink/v1.0/send", {"email": email}, service=service)
    assert sent.status_code == 200, sent.text
    found = OOB_CODE.search(sink.next_to(email, before).text)
    assert found, f"no oob_code in the email to {email}"
    return {"email": email, "oob_code": found.group(1), "sent": sent}


def sign_in_by_link(server: TesseraServer, sink: SMTPSink, name: str, *, service: bool = False) -> dict:
    link = send_link(server, sink, unique(name), service=service)
    done = post(server, "/emaillink/v1.0/complete", {"email": link["email"], "oob_code": link["oob_code"],
                                                     "scope": USER_SCOPE}, service=service)
    assert done.status_code == 200, done.text
    return {**done.json(), "link": link, "response": done}


@pytest.fixture(scope="module")
def credentials(server, sink, apple, workdir) -> dict:
    """Real credentials, made as apps make them, and written where the hooks read them.
    User grants by email link: `service` for the happy-path tests, `fuzz` and `app` for
    fuzzing, `revocable` for /revoke alone (so revocations don't end the others)."""
    standin, _ = apple
    with ThreadPoolExecutor(4) as pool:
        grants = {name: pool.submit(sign_in_by_link, server, sink, name, service=name != "app")
                  for name in ("service", "fuzz", "revocable", "app")}
        links = [pool.submit(send_link, server, sink, unique("fuzz-link")) for _ in range(LINKS_FOR_FUZZING)]
        client_credentials = post(server, "/token", {"grant_type": "client_credentials"}, service=True)
        grants = {name: future.result() for name, future in grants.items()}
        links = [future.result() for future in links]
    assert client_credentials.status_code == 200, client_credentials.text
    service_token = client_credentials.json()["access_token"]
    apple_sign_ins = []
    for n in range(APPLE_SIGN_INS_FOR_FUZZING):
        account = standin.add_account(f"fuzz-{n}-{uuid.uuid4().hex[:6]}", unique(f"apple-{n}"), "Fuzz", f"User{n}")
        given = standin.native_authorization(APPLE_APP, account, random_token(16))
        apple_sign_ins.append({"subject_token": given["identity_token"], "nonce": given["raw_nonce"],
                               "authorization_code": given["authorization_code"], "user": given["user"]})
    fuzz, app, revocable = grants["fuzz"], grants["app"], grants["revocable"]
    pushed = [push(server, PARTNER, "com.example.partner:/cb") for _ in range(PUSHED_FOR_FUZZING)]
    assert all(answer.status_code == 201 for answer in pushed), [answer.text for answer in pushed]
    seeds = {
        "app_id": APP, "service_id": SERVICE, "service_secret": SERVICE_SECRET, "user_scope": USER_SCOPE,
        "links": [{"email": link["email"], "oob_code": link["oob_code"]} for link in links],
        "app_access_token": app["access_token"],
        "refresh_token": fuzz["refresh_token"],
        # the service's own tokens (active), the app's (inactive for the service), its client_credentials token
        "tokens": [fuzz["access_token"], fuzz["refresh_token"], app["access_token"], app["refresh_token"], service_token],
        # userinfo: users' tokens (200), the client_credentials token (403), one /revoke may have ended (401)
        "bearer_tokens": [fuzz["access_token"], app["access_token"], service_token, revocable["access_token"]],
        "revocable": [revocable["access_token"], revocable["refresh_token"]],
        "apple": apple_sign_ins,
        "request_uris": [answer.json()["request_uri"] for answer in pushed],
        "partners": [PARTNER, APP, SERVICE],
    }
    path = workdir / "api-fuzz-seeds.json"
    path.write_text(json.dumps(seeds))
    return {"path": path, "grants": grants, "links": links, "client_credentials": client_credentials}


# ---------------------------------------------------------------------------
# The happy paths, and the errors next to them, against the documents


def assert_conforms(document: Path, path: str, method: str, response: requests.Response) -> None:
    """schemathesis' own response checks: status documented, content type, headers, schema."""
    import schemathesis
    from schemathesis import checks

    operation = schemathesis.openapi.from_path(str(document))[path][method]
    operation.Case().validate_response(response, checks=[
        checks.status_code_conformance, checks.content_type_conformance, checks.response_headers_conformance,
        checks.response_schema_conformance])


def test_email_link_answers_match_the_email_link_document(server, credentials):
    grant = credentials["grants"]["app"]
    assert_conforms(EMAIL_LINK_DOC, "/emaillink/v1.0/send", "POST", grant["link"]["sent"])
    assert_conforms(EMAIL_LINK_DOC, "/emaillink/v1.0/complete", "POST", grant["response"])
    assert grant["is_new_user"] is True and grant["refresh_token"] and grant["id_token"], grant

    used = post(server, "/emaillink/v1.0/complete", {"email": grant["link"]["email"], "oob_code": grant["link"]["oob_code"],
                                                     "scope": USER_SCOPE})
    assert (used.status_code, used.json().get("suberror")) == (400, "invalid_oob_code"), used.text
    assert_conforms(EMAIL_LINK_DOC, "/emaillink/v1.0/complete", "POST", used)

    link = credentials["links"][0]  # refused before it is used: it stays usable for the fuzzing
    no_user = post(server, "/emaillink/v1.0/complete", {"email": link["email"], "oob_code": link["oob_code"],
                                                        "scope": USER_SCOPE, "operation": "link"})
    assert (no_user.status_code, no_user.json()["error"]) == (401, "invalid_token"), no_user.text
    assert no_user.headers["WWW-Authenticate"].startswith("Bearer"), no_user.headers
    assert_conforms(EMAIL_LINK_DOC, "/emaillink/v1.0/complete", "POST", no_user)

    unauthenticated = post(server, "/emaillink/v1.0/send", {"client_id": SERVICE, "email": unique("x")})
    assert (unauthenticated.status_code, unauthenticated.json()["error"]) == (401, "invalid_client"), unauthenticated.text
    assert_conforms(EMAIL_LINK_DOC, "/emaillink/v1.0/send", "POST", unauthenticated)


def test_oauth_answers_match_the_oauth_document(server, credentials):
    grant = credentials["grants"]["service"]
    assert_conforms(OAUTH_DOC, "/token", "POST", credentials["client_credentials"])
    refreshed = post(server, "/token", {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"]}, service=True)
    assert refreshed.status_code == 200 and refreshed.json()["refresh_token"] != grant["refresh_token"], refreshed.text
    assert_conforms(OAUTH_DOC, "/token", "POST", refreshed)
    wrong = requests.post(server.issuer + "/token", data={"grant_type": "client_credentials"},
                          headers={"Authorization": basic(SERVICE, "not the secret")}, timeout=30)
    assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_client"), wrong.text
    assert_conforms(OAUTH_DOC, "/token", "POST", wrong)

    for token in (grant["access_token"], refreshed.json()["refresh_token"], random_token()):
        introspected = post(server, "/introspect", {"token": token}, service=True)
        assert introspected.status_code == 200, introspected.text
        assert_conforms(OAUTH_DOC, "/introspect", "POST", introspected)
    revoked = post(server, "/revoke", {"token": random_token()}, service=True)
    assert revoked.status_code == 200 and not revoked.content, revoked.text
    assert_conforms(OAUTH_DOC, "/revoke", "POST", revoked)

    info = requests.get(server.issuer + "/userinfo", headers={"Authorization": "Bearer " + grant["access_token"]}, timeout=30)
    assert info.status_code == 200 and info.json()["email"] == grant["email"], info.text
    assert_conforms(OAUTH_DOC, "/userinfo", "GET", info)
    without_openid = requests.post(server.issuer + "/userinfo", timeout=30,
                                   data={"access_token": credentials["client_credentials"].json()["access_token"]})
    assert without_openid.status_code == 403, without_openid.text
    assert_conforms(OAUTH_DOC, "/userinfo", "POST", without_openid)


def test_cross_app_answers_match_the_oauth_document(server, credentials):
    """Pushing, and an authenticator app reading, approving and handing over, with real credentials."""
    pushed = push(server, PARTNER, "com.example.partner:/cb")
    assert pushed.status_code == 201, pushed.text
    assert_conforms(OAUTH_DOC, "/authorize/v1.0/par", "POST", pushed)
    refused = push(server, PARTNER, "https://evil.example/cb")
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_request"), refused.text
    assert_conforms(OAUTH_DOC, "/authorize/v1.0/par", "POST", refused)
    app_token = credentials["grants"]["app"]["access_token"]
    uri = pushed.json()["request_uri"]
    for path, data in (("/authorize/v1.0/details", {"request_uri": uri}),
                       ("/authorize/v1.0/approve", {"request_uri": uri, "decision": "allow"}),
                       ("/authorize/v1.0/handoff", {"client_id": PARTNER})):
        answer = post(server, path, data, bearer=app_token)
        assert answer.status_code == 200, answer.text
        assert_conforms(OAUTH_DOC, path, "POST", answer)
        anonymous = post(server, path, data)
        assert anonymous.status_code == 401 and anonymous.headers["WWW-Authenticate"].startswith("Bearer"), anonymous.text
        assert_conforms(OAUTH_DOC, path, "POST", anonymous)
    used = post(server, "/authorize/v1.0/approve", {"request_uri": uri, "decision": "allow"}, bearer=app_token)
    assert (used.status_code, used.json()["error"]) == (400, "invalid_request_uri"), used.text
    assert_conforms(OAUTH_DOC, "/authorize/v1.0/approve", "POST", used)
    not_an_authenticator = post(server, "/authorize/v1.0/handoff", {"client_id": PARTNER},
                                bearer=credentials["grants"]["service"]["access_token"])
    assert not_an_authenticator.status_code == 403, not_an_authenticator.text
    assert_conforms(OAUTH_DOC, "/authorize/v1.0/handoff", "POST", not_an_authenticator)


def test_native_apple_token_exchange_answers_match_the_oauth_document(server, apple):
    standin, _ = apple
    account = standin.add_account("exchange-" + uuid.uuid4().hex[:6], unique("apple-exchange"), "Ann", "Apple")
    given = standin.native_authorization(APPLE_APP, account, random_token(16))
    data = {"grant_type": TOKEN_EXCHANGE, "subject_token": given["identity_token"], "subject_token_type": ID_TOKEN_TYPE,
            "upstream_provider": "apple", "nonce": given["raw_nonce"], "authorization_code": given["authorization_code"],
            "user": given["user"], "scope": USER_SCOPE}
    exchanged = post(server, "/token", data, service=True)
    assert exchanged.status_code == 200 and exchanged.json()["is_new_user"] is True, exchanged.text
    assert_conforms(OAUTH_DOC, "/token", "POST", exchanged)
    replayed = post(server, "/token", {**data, "user": ""}, service=True)
    assert (replayed.status_code, replayed.json()["error"]) == (400, "invalid_grant"), replayed.text
    assert_conforms(OAUTH_DOC, "/token", "POST", replayed)


@pytest.mark.parametrize("path, form, as_service", [
    pytest.param("/token", [("grant_type", "client_credentials"), ("scope", "api.read"), ("scope", "email")], True,
                 id="token"),
    pytest.param("/introspect", [("token", "first"), ("token", "second")], True, id="introspect"),
    pytest.param("/revoke", [("token", "first"), ("token", "second")], True, id="revoke"),
    pytest.param("/userinfo", [("access_token", "first"), ("access_token", "second")], False, id="userinfo"),
    pytest.param("/emaillink/v1.0/send", [("client_id", APP), ("email", "a@example.com"), ("email", "b@example.com")],
                 False, id="email-link-send"),
    pytest.param("/emaillink/v1.0/complete", [("client_id", APP), ("email", "a@example.com"), ("oob_code", "x"),
                                              ("scope", "openid"), ("scope", "email")], False, id="email-link-complete"),
])
def test_a_parameter_sent_twice_is_invalid_request(server, path, form, as_service):
    answer = post(server, path, form, service=as_service)
    error = answer.json().get("error") if answer.content else None
    assert (answer.status_code, error) == (400, "invalid_request"), \
        f"POST {path} {form}: {answer.status_code} {answer.text}"
    assert_conforms(EMAIL_LINK_DOC if path.startswith("/emaillink/") else OAUTH_DOC, path, "POST", answer)


KEY_CLIENT = "fuzz-key-client"
KEY_ID = "fuzz-key-1"
OUT_OF_RANGE = {"exp": 2**63 - 1, "nbf": -2**63, "iat": -2**63}


@pytest.fixture(scope="module")
def key_client(binary, workdir, server):
    """A private_key_jwt client on the module's server."""
    key = ECKey.generate_key("P-256")
    public = key.as_dict(private=False)
    public.update(kid=KEY_ID, use="sig", alg="ES256")
    jwks = workdir / "api-fuzz-key-client-jwks.json"
    jwks.write_text(json.dumps({"keys": [public]}))
    CLI(binary, new_database(workdir, "api-fuzz"), workdir).add_client("Fuzz Key Client", client_id=KEY_CLIENT, jwks_file=jwks,
                                                                grant_types=["client_credentials"], scopes=["api.read"])
    return key


@pytest.mark.parametrize("claim", sorted(OUT_OF_RANGE))
def test_a_signed_client_assertion_with_a_time_out_of_range_is_invalid_client(server, key_client, claim):
    now = int(time.time())
    claims = {"iss": KEY_CLIENT, "sub": KEY_CLIENT, "aud": server.issuer, "iat": now, "exp": now + 120,
              "jti": str(uuid.uuid4()), claim: OUT_OF_RANGE[claim]}
    assertion = jwt.encode({"alg": "ES256", "kid": KEY_ID}, claims, key_client, algorithms=["ES256"])
    form = {"grant_type": "client_credentials", "client_assertion_type": JWT_BEARER, "client_assertion": assertion}
    try:
        answer = requests.post(server.issuer + "/token", data=form, timeout=30)
    except requests.ConnectionError:
        pytest.fail(f"tessera serve died on a signed client assertion with {claim}={OUT_OF_RANGE[claim]}")
    assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client"), answer.text
    assert_conforms(OAUTH_DOC, "/token", "POST", answer)
    assert requests.get(server.issuer + "/health", timeout=10).status_code == 200


# ---------------------------------------------------------------------------
# Fuzzing

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
PHASE_LINE = re.compile(r"^ \S+\s+(Examples|Coverage|Fuzzing|Stateful) \(in [^)]*\)\n\n(.*)$", re.M)
SKIPPED = re.compile(r"(\d+) skipped")
SKIPPED_IN_SUMMARY = re.compile(r"^ +Skipped: (\d+)\n((?: +- .*\n)*)", re.M)


def operations_without_input(document: dict) -> list[str]:
    """The operations that take nothing: no parameter and no body (GET /userinfo, whose token
    is the security scheme's; the documents themselves; the admin API's keys)."""
    return [f"{method.upper()} {path}" for path, item in document.get("paths", {}).items()
            for method, operation in item.items()
            if method in HTTP_METHODS and not (item.get("parameters") or operation.get("parameters")
                                               or operation.get("requestBody"))]


def schemathesis_options(document: dict, config: Path) -> list[str]:
    """Options of `schemathesis` (before `run`) for the examples phase. It sends each operation
    its document's examples and skips one that has none ("No examples in schema"); every
    operation that takes an input has examples, and an operation that takes none has nothing
    to give an example of: `fill-missing`, for those alone, sends it its one request. Written
    to `config`."""
    names = operations_without_input(document)
    if not names:
        return []
    config.write_text(f"[[operations]]\ninclude-name = {json.dumps(names)}\nphases.examples.fill-missing = true\n")
    return ["--config-file", str(config)]


def skipped_operations(events: Path) -> list[str]:
    """From the NDJSON event report: each operation a phase skipped, with the reason."""
    skipped = []
    for line in events.read_text().splitlines():
        finished = json.loads(line).get("ScenarioFinished")
        if finished and finished.get("status") == "skip":
            skipped.append(f"{finished.get('phase')}: {finished['recorder']['label']} ({finished.get('skip_reason')})")
    return skipped


def assert_no_operation_skipped(stdout: str, events: Path | None = None) -> None:
    """schemathesis names what each phase did (`✅ 21 passed  ⏭  3 skipped`) and, when some
    operation was tested by no phase, `Skipped: N` in its summary: no phase may skip one.
    Prints each phase's line and the summary's counts."""
    phases = PHASE_LINE.findall(stdout)
    assert any(name == "Examples" for name, _ in phases), f"no Examples phase in schemathesis' output:\n{stdout[-3000:]}"
    for name, line in phases:
        print(f"schemathesis {name}: {line.strip()}")
    print("schemathesis summary: " + "; ".join(re.findall(r"^ +((?:Selected|Tested|Skipped): .*|\d+ generated.*)$", stdout, re.M)))
    skipped = {name: int(found.group(1)) for name, line in phases if (found := SKIPPED.search(line)) and int(found.group(1))}
    summary = SKIPPED_IN_SUMMARY.search(stdout)
    if skipped or (summary and int(summary.group(1))):
        named = skipped_operations(events) if events is not None and events.exists() else []
        pytest.fail("schemathesis skipped operations (give each an example in its OpenAPI document): "
                    + ", ".join(f"{n} in {phase}" for phase, n in skipped.items())
                    + (f"; summary: Skipped: {summary.group(1)} {summary.group(2).strip()}" if summary else "")
                    + "".join(f"\n  {entry}" for entry in named), pytrace=False)


def run_schemathesis(document: Path, server: TesseraServer, credentials: dict, workdir: Path, name: str) -> dict[str, Counter]:
    """`schemathesis run` over one document with this module as its hooks; returns the
    statuses answered to the generated cases, per operation. No phase may skip an operation."""
    events = workdir / f"{name}-fuzz.ndjson"
    options = schemathesis_options(json.loads(document.read_text()), workdir / f"{name}-schemathesis.toml")
    # One worker: with two, schemathesis 4.32 leaves one operation of these small documents
    # out of the fuzzing phase (0 cases); the run is short either way.
    command = [str(Path(sys.executable).with_name("schemathesis")), *options, "run", str(document), "--url", server.issuer,
               "--checks", CHECKS, "--max-examples", str(FUZZ_EXAMPLES), "--phases", "examples,coverage,fuzzing",
               "--seed", FUZZ_SEED, "--no-shrink", "--generation-database", "none", "--workers", "1",
               "--request-timeout", "30", "--no-color", "--report", "junit,ndjson",
               "--report-junit-path", str(workdir / f"{name}-fuzz-junit.xml"), "--report-ndjson-path", str(events)]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": Path(__file__).stem, SEEDS_ENV: str(credentials["path"]),
           "PYTHONPATH": str(Path(__file__).parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, (f"schemathesis found problems:\n{done.stdout[-8000:]}\n{done.stderr[-3000:]}\n"
                                  f"tessera serve's log, last lines:\n{server.log()[-3000:]}")
    assert_no_operation_skipped(done.stdout, events)
    answers = answers_per_operation(events)
    generated = re.search(r"(\d+) generated", done.stdout)
    assert generated and int(generated.group(1)) == sum(sum(c.values()) for c in answers.values()), done.stdout[-2000:]
    for label, statuses in sorted(answers.items()):
        print(f"{name}: {label}: {sum(statuses.values())} cases, answers {dict(sorted(statuses.items(), key=str))}")
    return answers


def answers_per_operation(events: Path) -> dict[str, Counter]:
    """From the NDJSON event report: each operation's generated cases, by the status answered."""
    answers: dict[str, Counter] = {}
    for line in events.read_text().splitlines():
        finished = json.loads(line).get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished["recorder"]
        statuses = answers.setdefault(recorder["label"], Counter())
        for case_id in recorder.get("cases", {}):
            response = (recorder.get("interactions", {}).get(case_id) or {}).get("response") or {}
            statuses[response.get("status_code", "no answer")] += 1
    return answers


def assert_reached(answers: dict[str, Counter], expected: dict[str, tuple[int, ...]]) -> None:
    """Every operation was fuzzed FUZZ_EXAMPLES times at least and got each of these answers:
    the hooks' credentials took requests past client authentication."""
    for label, statuses in expected.items():
        got = answers.get(label, Counter())
        assert sum(got.values()) >= FUZZ_EXAMPLES, f"{label}: only {sum(got.values())} cases"
        missing = [status for status in statuses if not got[status]]
        assert not missing, f"{label} never answered {missing}: {dict(got)}"


def test_fuzzed_email_link_requests_never_get_a_server_error_and_match_the_document(server, credentials, workdir):
    answers = run_schemathesis(EMAIL_LINK_DOC, server, credentials, workdir, "email-link")
    assert_reached(answers, {"POST /emaillink/v1.0/send": (200, 400), "POST /emaillink/v1.0/complete": (200, 400)})


def test_fuzzed_oauth_requests_never_get_a_server_error_and_match_the_document(server, credentials, workdir):
    answers = run_schemathesis(OAUTH_DOC, server, credentials, workdir, "oauth")
    assert_reached(answers, {"POST /token": (200, 400, 401), "POST /introspect": (200, 400, 401),
                             "POST /revoke": (200, 400, 401), "GET /userinfo": (200, 401), "POST /userinfo": (200, 401),
                             "POST /authorize/v1.0/par": (201, 400, 401), "POST /authorize/v1.0/details": (200, 400, 401),
                             "POST /authorize/v1.0/approve": (200, 400, 401), "POST /authorize/v1.0/handoff": (200, 400, 401)})


# ---------------------------------------------------------------------------
# The hooks, when schemathesis imports this module (SCHEMATHESIS_HOOKS)


def _install_fuzz_hooks(seeds_path: Path) -> None:
    import schemathesis

    seeds = json.loads(seeds_path.read_text())
    lock = threading.Lock()
    pools = {"links": list(seeds["links"]), "apple": list(seeds["apple"]), "refresh_token": seeds["refresh_token"],
             # approvals use their requests up; details leave them: each has its own
             "approve": list(seeds["request_uris"][::2]), "details": list(seeds["request_uris"][1::2])}

    occurrences: Counter = Counter()

    def dice(case, *, again: bool = False) -> random.Random:
        """A die per request, seeded with its content: the same run makes the same choices.
        `again`: each request with the same content gets a die of its own (a GET /userinfo
        without headers has no other content), for a choice made once per request."""
        body = case.body if isinstance(case.body, (dict, list, str, bytes)) else None  # not the repr of NOT_SET, an address
        text = repr((case.operation.label, body, case.query, sorted((case.headers or {}).items(), key=str)))
        if again:
            with lock:
                occurrences[text] += 1
                text += f"#{occurrences[text]}"
        return random.Random(zlib.crc32(text.encode()))

    def take(name: str):
        with lock:
            return pools[name].pop() if pools[name] else None

    def own_body(case) -> dict | None:
        """The case's body, as a copy of its own: in the examples phase schemathesis hands over
        the document's example itself, and a change made in place would rewrite the example for
        the later phases (which would send a used refresh token again, ending the grant)."""
        if not isinstance(case.body, dict):
            return None
        case.body = dict(case.body)
        return case.body

    @schemathesis.auth(refresh_interval=None).apply_to(path_regex=r"^/(token|introspect|revoke)$")
    class ServiceBasic:
        """The confidential service's HTTP Basic credentials, in three requests in four."""

        def get(self, case, context):
            return (seeds["service_id"], seeds["service_secret"]) if dice(case).random() < 0.75 else None

        def set(self, case, data, context):
            case.headers = {**(case.headers or {}), "Authorization": basic(*data)}
            if (body := own_body(case)) is not None:
                for name in CLIENT_AUTH_FIELDS:
                    body.pop(name, None)

    @schemathesis.auth(refresh_interval=None).apply_to(path="/userinfo")
    class UserBearer:
        """A real access token in three requests in four, in the header or the form."""

        def get(self, case, context):
            die = dice(case, again=True)
            return die.choice(seeds["bearer_tokens"]) if die.random() < 0.75 else None

        def set(self, case, data, context):
            body = own_body(case)
            if body is not None and "access_token" in body and dice(case).random() < 0.5:
                body["access_token"] = data
                return
            if body is not None:
                body.pop("access_token", None)
            case.headers = {**(case.headers or {}), "Authorization": "Bearer " + data}

    @schemathesis.auth(refresh_interval=None).apply_to(path_regex=r"^/authorize/v1\.0/(details|approve|handoff)$")
    class AuthenticatorBearer:
        """The authenticator app's user's access token, in three requests in four."""

        def get(self, case, context):
            return seeds["app_access_token"] if dice(case).random() < 0.75 else None

        def set(self, case, data, context):
            case.headers = {**(case.headers or {}), "Authorization": "Bearer " + data}

    @schemathesis.auth(refresh_interval=None).apply_to(path="/emaillink/v1.0/complete")
    class LinkingUser:
        """`link` and `reauthenticate` need the signed-in user's access token: the app's user."""

        def get(self, case, context):
            body = case.body if isinstance(case.body, dict) else {}
            wanted = body.get("operation") in ("link", "reauthenticate")
            return seeds["app_access_token"] if wanted and dice(case).random() < 0.75 else None

        def set(self, case, data, context):
            case.headers = {**(case.headers or {}), "Authorization": "Bearer " + data}

    @schemathesis.hook
    def before_call(context, case, kwargs):
        body = own_body(case)
        if body is None:
            return
        die = dice(case)
        path = case.operation.path
        if path.startswith("/emaillink/"):
            basic_sent = str((case.headers or {}).get("Authorization", "")).startswith("Basic")
            if "client_id" in body and not basic_sent and die.random() < 0.75:
                body["client_id"] = seeds["app_id"]
                body.pop("client_secret", None)
            if path.endswith("/complete") and body.get("client_id") == seeds["app_id"] and die.random() < 0.5:
                link = take("links")
                if link is not None:
                    body.update(email=link["email"], scope=die.choice([seeds["user_scope"], "openid", body.get("scope", "")]))
                    if die.random() < 0.5:
                        body["oob_code"] = link["oob_code"]
                        body.pop("link", None)
                    else:
                        body["link"] = f"https://id.example.com/emaillink/v1.0/signin?mode=signIn&oob_code={link['oob_code']}"
                        body.pop("oob_code", None)
        elif path == "/authorize/v1.0/par" and die.random() < 0.75:
            # The partner, a public client: its id in the body, no other credentials; often a request that checks out.
            case.headers = {name: value for name, value in (case.headers or {}).items() if name.lower() != "authorization"}
            for name in CLIENT_AUTH_FIELDS:
                body.pop(name, None)
            body["client_id"] = PARTNER
            if die.random() < 0.6:
                body.update(response_type="code", redirect_uri="com.example.partner:/cb",
                            code_challenge=s256(random_token(48)), code_challenge_method="S256")
                body["scope"] = die.choice(["openid email", "openid", body.get("scope", "openid")])
                for name in ("request_uri", "handoff_ticket", "max_age", "claims", "prompt") if die.random() < 0.7 else ():
                    body.pop(name, None)
        elif path in ("/authorize/v1.0/details", "/authorize/v1.0/approve") and die.random() < 0.5:
            uri = take(path.rsplit("/", 1)[1])
            if uri is not None:
                body["request_uri"] = uri
                if path.endswith("approve") and die.random() < 0.7:
                    body["decision"] = die.choice(["allow", "deny"])
        elif path == "/authorize/v1.0/handoff" and die.random() < 0.6:
            body["client_id"] = die.choice(seeds["partners"])
        elif path == "/token" and die.random() < 0.6:
            if body.get("grant_type") == "refresh_token":
                with lock:
                    body["refresh_token"] = pools["refresh_token"]
                if die.random() < 0.5:
                    body.pop("scope", None)
            elif body.get("grant_type") == TOKEN_EXCHANGE:
                body["upstream_provider"] = "apple"
                sign_in = take("apple") if die.random() < 0.5 else None
                if sign_in is not None:
                    body.update(subject_token_type=ID_TOKEN_TYPE, scope=seeds["user_scope"],
                                **{k: v for k, v in sign_in.items() if v is not None})
        elif path == "/introspect" and "token" in body and die.random() < 0.6:
            body["token"] = die.choice(seeds["tokens"])
        elif path == "/revoke" and "token" in body and die.random() < 0.6:
            body["token"] = die.choice(seeds["revocable"])

    @schemathesis.hook
    def after_call(context, case, response):
        """Keeps the rotated refresh token, so that later refreshes can succeed too."""
        if case.operation.path != "/token" or response.status_code != 200 or not isinstance(case.body, dict) \
                or case.body.get("grant_type") != "refresh_token":
            return
        try:
            rotated = json.loads(response.content).get("refresh_token")
        except ValueError:
            return
        if rotated:
            with lock:
                pools["refresh_token"] = rotated


if os.environ.get(SEEDS_ENV) and os.environ.get("SCHEMATHESIS_HOOKS") == Path(__file__).stem:
    _install_fuzz_hooks(Path(os.environ[SEEDS_ENV]))
