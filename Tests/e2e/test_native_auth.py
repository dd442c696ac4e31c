"""The native sign-in API (Microsoft Entra External ID's native authentication wire
protocol), driven as an app written against the public reference would drive it: form
POSTs with `requests`, codes read from the emails a real SMTP server (aiosmtpd) receives,
ID tokens verified against the JWKS with joserfc. Then schemathesis fuzzes every operation
of the served OpenAPI document, and no answer may be a 5xx.

Two servers of their own, both sending to one aiosmtpd relay: the default settings
(enumeration protection on) with two pages of sign-up attributes and a 2 s resend interval;
and one with protection off, a password required at sign-up and codes that live 4 s.

An SMTP outage spans the module: the relay is stopped for the first test and the code
asked for then must arrive by the last one (the outbox retries a minute later)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from e2e_support import new_database, CLI, Client, Provider, TesseraServer
from smtp_sink import SMTPSink

ATTRIBUTES = [
    {"name": "given_name", "required": True},
    {"name": "family_name"},
    {"name": "city", "required": True, "page": 2, "pattern": "[A-Za-zА-Яа-яЁё -]+"},
    {"name": "birthdate"},
]
APP = "native-app"
THIRD_PARTY = "third-party-app"
CONFIDENTIAL = "confidential-first-party"
CONFIDENTIAL_SECRET = "native-e2e-secret-0123456789-abcdefghij"
PASSWORD = "a long and unusual passphrase"
ERROR_KEYS = {"error", "error_description", "error_codes", "timestamp", "trace_id", "correlation_id"}
CODE_LENGTH = 8
SERVER_ENV = {"TESSERA_LOGIN_FAILURES_PER_ADDRESS": "1000", "TESSERA_LOG_LEVEL": "info",
              "TESSERA_FLOWS_PER_ADDRESS": "100000", "TESSERA_HASHING_PER_ADDRESS": "100000",
              # every request comes from 127.0.0.1: the per-address hourly limit of codes must not get in the way
              "TESSERA_OTP_PER_ADDRESS_PER_HOUR": "100000"}
OUTAGE_RETRY_DEADLINE = 80  # seconds after the failed attempt: retry after 60 s, rounds every 15 s or on new mail

SIGN_UP_START, SIGN_UP_CHALLENGE, SIGN_UP_CONTINUE = "/signup/v1.0/start", "/signup/v1.0/challenge", "/signup/v1.0/continue"
INITIATE, CHALLENGE, TOKEN = "/oauth2/v2.0/initiate", "/oauth2/v2.0/challenge", "/oauth2/v2.0/token"
INTROSPECT = "/oauth2/v2.0/introspect"  # the second factor's methods (test_second_factor.py)
PASSKEY_OPTIONS, PASSKEY_SIGNIN = "/passkey/v1.0/options", "/passkey/v1.0/signin"  # an app's passkeys (PasskeyClientTests)
RESET_START, RESET_CHALLENGE, RESET_CONTINUE = "/resetpassword/v1.0/start", "/resetpassword/v1.0/challenge", "/resetpassword/v1.0/continue"
RESET_SUBMIT, RESET_POLL = "/resetpassword/v1.0/submit", "/resetpassword/v1.0/poll_completion"
ALL_PATHS = [SIGN_UP_START, SIGN_UP_CHALLENGE, SIGN_UP_CONTINUE, INITIATE, CHALLENGE, INTROSPECT, TOKEN, RESET_START, RESET_CHALLENGE,
             RESET_CONTINUE, RESET_SUBMIT, RESET_POLL, PASSKEY_OPTIONS, PASSKEY_SIGNIN]


# ---------------------------------------------------------------------------
# The app's side of the protocol


def unique(name: str) -> str:
    """A new address, without digits (a code is the only run of digits in an email)."""
    return f"{name}-{uuid.uuid4().hex[:12].translate(str.maketrans('0123456789', 'ghijklmnop'))}@example.com"


class NativeApp:
    """A first-party app: posts forms to the reference paths under the issuer."""

    def __init__(self, issuer: str, sink: SMTPSink, client_id: str = APP):
        self.issuer = issuer
        self.sink = sink
        self.client_id = client_id
        self.http = requests.Session()
        self.op = Provider(issuer)

    def post(self, path: str, data: dict | None = None, *, headers: dict | None = None, auth=None,
             client_id: str | None = None) -> requests.Response:
        form = {"client_id": client_id or self.client_id, **(data or {})}
        form = {k: v for k, v in form.items() if v is not None}
        return self.http.post(self.issuer + path, data=form, headers=headers, auth=auth, timeout=30)

    # -- flows, one step per call, each asserting its success

    def sign_up_start(self, email: str, challenge_type: str = "oob password redirect", **extra) -> str:
        r = self.post(SIGN_UP_START, {"username": email, "challenge_type": challenge_type, **extra})
        return ok(r)["continuation_token"]

    def challenge(self, path: str, token: str, headers: dict | None = None, **extra) -> dict:
        return ok(self.post(path, {"continuation_token": token, **extra}, headers=headers))

    def code(self, email: str, after: int = 0, timeout: float = 15) -> str:
        mail = self.sink.next_to(email, after, timeout)
        code = mail.code(CODE_LENGTH)
        assert code, f"no {CODE_LENGTH}-digit code in the email to {email}: {mail.text!r}"
        return code

    def sign_up(self, email: str, *, password: str | None = None, attributes: dict | None = None,
                headers: dict | None = None) -> dict:
        """A whole sign-up by code (with a password when given); returns the last answer."""
        attributes = {"given_name": "Test", "city": "Berlin"} if attributes is None else attributes
        before = len(self.sink.to(email))
        token = self.sign_up_start(email, password=password, attributes=json.dumps(attributes))
        challenge = self.challenge(SIGN_UP_CHALLENGE, token, headers=headers)
        assert challenge["challenge_type"] == "oob", challenge
        done = self.post(SIGN_UP_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                                            "oob": self.code(email, before)})
        return ok(done)

    def tokens(self, data: dict, scope: str = "openid profile email offline_access") -> dict:
        body = ok(self.post(TOKEN, {"scope": scope, **data}))
        assert body["token_type"] == "Bearer" and body["access_token"] and body["expires_in"] > 0, body
        return body

    def sign_in_with_password(self, email: str, password: str, scope: str = "openid profile email offline_access"):
        token = ok(self.post(INITIATE, {"username": email, "challenge_type": "password redirect"}))["continuation_token"]
        challenge = self.challenge(CHALLENGE, token)
        assert challenge["challenge_type"] == "password", challenge
        return self.post(TOKEN, {"continuation_token": challenge["continuation_token"], "grant_type": "password",
                                 "password": password, "scope": scope})

    def sign_in_code_challenge(self, email: str) -> dict:
        token = ok(self.post(INITIATE, {"username": email, "challenge_type": "oob redirect"}))["continuation_token"]
        challenge = self.challenge(CHALLENGE, token)
        assert challenge["challenge_type"] == "oob", challenge
        return challenge

    def verify_id_token(self, id_token: str) -> dict:
        """Signature against the JWKS (joserfc), iss, aud, exp."""
        return self.op.verify_id_token(id_token, Client(self.client_id, None, [], {}))


def ok(r: requests.Response) -> dict:
    assert r.status_code == 200, f"{r.request.url}: {r.status_code} {r.text[:600]}"
    assert r.headers.get("Content-Type", "").startswith("application/json"), r.headers
    return r.json()


def error(r: requests.Response, code: str, suberror: str | None = None, status: int = 400,
          codes: list[int] | None = None) -> dict:
    """The reference API's error body, with this `error` (and `suberror`, `error_codes`)."""
    try:
        body = r.json()
    except ValueError:
        raise AssertionError(f"not JSON ({r.status_code}): {r.text[:300]}")
    assert (r.status_code, body.get("error"), body.get("suberror")) == (status, code, suberror), \
        f"{r.request.url}: expected {status} {code}/{suberror}, got {r.status_code} {body}"
    assert ERROR_KEYS <= body.keys(), body
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ", body["timestamp"]), body["timestamp"]
    assert isinstance(body["error_codes"], list), body
    if codes is not None:
        assert body["error_codes"] == codes, body
    for key in ("access_token", "id_token", "refresh_token"):
        assert key not in body
    return body


def shape(r: requests.Response) -> tuple:
    """What an observer can compare between two answers: status, keys, error, suberror, codes."""
    body = r.json()
    return r.status_code, sorted(body), body.get("error"), body.get("suberror"), body.get("error_codes"), body.get("challenge_type")


def b64json(text: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


# ---------------------------------------------------------------------------
# Servers, relay and clients of this module


def _start_native_server(binary: str, workdir: Path, name: str, sink: SMTPSink, env: dict, clients: list[dict]):
    database = new_database(workdir, name)
    cli = CLI(binary, database, workdir)
    # The schema first (the CLI creates it), then the server and the clients at the same time.
    first, *rest = clients
    cli.add_client(**first)
    server = TesseraServer(binary, database, workdir, env={**SERVER_ENV, **env}, name=name,
                           args=["--smtp-url", sink.url])
    with ThreadPoolExecutor(2) as pool:
        started = pool.submit(server.start)
        for spec in rest:
            cli.add_client(**spec)
        started.result()
    return server


@pytest.fixture(scope="module")
def servers(binary, workdir, sink):
    app = dict(name="Native App", client_id=APP, public=True, first_party=True, redirect_uris=["http://127.0.0.1/callback"])
    specs = {
        "native": ({"TESSERA_SIGNUP_ATTRIBUTES": json.dumps(ATTRIBUTES), "TESSERA_OTP_RESEND_INTERVAL": "2s"},
                   [app,
                    dict(name="Third-party App", client_id=THIRD_PARTY, public=True, redirect_uris=["http://127.0.0.1/callback"]),
                    dict(name="Confidential First-party", client_id=CONFIDENTIAL, secret=CONFIDENTIAL_SECRET, first_party=True,
                         redirect_uris=["http://127.0.0.1/callback"])]),
        "native-open": ({"TESSERA_ENUMERATION_PROTECTION": "off", "TESSERA_SIGNUP_ATTRIBUTES": json.dumps(ATTRIBUTES),
                         "TESSERA_OTP_LIFETIME": "4s", "TESSERA_OTP_RESEND_INTERVAL": "1s",
                         "TESSERA_SIGNUP_PASSWORD": "required"}, [app]),
    }
    with ThreadPoolExecutor(2) as pool:
        futures = {name: pool.submit(_start_native_server, binary, workdir, name, sink, env, clients)
                   for name, (env, clients) in specs.items()}
        started = {name: future.result() for name, future in futures.items()}
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture(scope="module")
def native(servers) -> TesseraServer:
    """Default settings: enumeration protection on."""
    return servers["native"]


@pytest.fixture(scope="module")
def native_open(servers) -> TesseraServer:
    """Enumeration protection off, 4 s codes, sign-up needs a password."""
    return servers["native-open"]


@pytest.fixture
def app(native, sink) -> NativeApp:
    return NativeApp(native.issuer, sink)


@pytest.fixture
def open_app(native_open, sink) -> NativeApp:
    return NativeApp(native_open.issuer, sink)


# ---------------------------------------------------------------------------
# An SMTP outage, begun first and checked last (the retry comes a minute later)

@pytest.fixture(scope="module")
def smtp_outage(native, sink) -> dict:
    """Signs a user up, stops the relay, asks for a sign-in code (the server must answer
    200: the email is in its outbox), waits for the failed delivery attempt, starts the
    relay again on the same port."""
    a = NativeApp(native.issuer, sink)
    email = unique("outage")
    a.sign_up(email)
    before = len(sink.to(email))
    offset = len(native.log())
    sink.stop()
    try:
        challenge = a.sign_in_code_challenge(email)
        deadline = time.monotonic() + 20
        while "will retry" not in native.log()[offset:] and time.monotonic() < deadline:
            time.sleep(0.1)
        failed_at = time.monotonic()
        assert "will retry" in native.log()[offset:], native.log()[offset:][-2000:]
    finally:
        sink.start()
    return dict(email=email, before=before, token=challenge["continuation_token"], failed_at=failed_at, app=a)


def test_a_code_asked_for_during_an_smtp_outage_is_accepted_and_kept(smtp_outage, sink):
    assert len(sink.to(smtp_outage["email"])) == smtp_outage["before"], "nothing can have arrived while the relay was down"


# ---------------------------------------------------------------------------
# Sign-up


def test_discovery_names_the_native_endpoints_and_the_openapi_document(app):
    config = app.op.config
    endpoints = config["native_authentication_endpoints"]
    assert sorted(endpoints.values()) == sorted(app.issuer + path for path in ALL_PATHS)
    document = requests.get(config["native_authentication_openapi"], timeout=10)
    assert document.status_code == 200 and document.json()["openapi"].startswith("3.1")
    assert set(ALL_PATHS) <= set(document.json()["paths"])


def test_sign_up_by_code_with_attributes_over_two_pages_then_sign_in_with_the_continuation_token(app, sink):
    email = unique("Anna.Code")
    token = app.sign_up_start(email, challenge_type="oob redirect",
                              attributes=json.dumps({"family_name": "Liddell", "not_collected": "ignored"}))
    request_id = str(uuid.uuid4())
    challenge = app.post(SIGN_UP_CHALLENGE, {"continuation_token": token},
                         headers={"Accept-Language": "ru", "client-request-id": request_id})
    assert challenge.headers.get("x-ms-request-id") == request_id
    body = ok(challenge)
    assert body["challenge_type"] == "oob" and body["binding_method"] == "prompt" and body["challenge_channel"] == "email"
    assert body["code_length"] == CODE_LENGTH and body["interval"] == 2
    assert body["challenge_target_label"] != email.lower() and "***" in body["challenge_target_label"]

    mail = sink.next_to(email.lower())
    assert re.match(r"=\?utf-8\?[bq]\?", mail.raw_subject, re.IGNORECASE), f"Subject not RFC 2047 UTF-8: {mail.raw_subject!r}"
    assert mail.subject == "Код подтверждения"
    assert mail.message.get_content_type() == "multipart/alternative"
    assert mail.part("text/plain") is not None and mail.part("text/html") is not None
    assert mail.part("text/plain").get_content_charset() == "utf-8"
    assert mail.message["Content-Language"] == "ru"
    code = mail.code(CODE_LENGTH)
    assert code and code in mail.html, "the code is in both parts"

    continuation = body["continuation_token"]
    wrong = "0" * CODE_LENGTH if code != "0" * CODE_LENGTH else "1" * CODE_LENGTH
    error(app.post(SIGN_UP_CONTINUE, {"continuation_token": continuation, "grant_type": "oob", "oob": wrong}),
          "invalid_grant", "invalid_oob_value")
    verified = app.post(SIGN_UP_CONTINUE, {"continuation_token": continuation, "grant_type": "oob", "oob": code},
                        headers={"client-request-id": request_id})
    page1 = error(verified, "attributes_required", codes=[55106])
    assert page1["correlation_id"] == request_id
    assert page1["required_attributes"] == [{"name": "given_name", "type": "string", "required": True}]
    # Each continuation token is good for one step.
    error(app.post(SIGN_UP_CONTINUE, {"continuation_token": continuation, "grant_type": "oob", "oob": code}),
          "invalid_request", codes=[55200])

    page2 = error(app.post(SIGN_UP_CONTINUE, {"continuation_token": page1["continuation_token"], "grant_type": "attributes",
                                              "attributes": json.dumps({"given_name": "Anna"})}), "attributes_required")
    assert [a["name"] for a in page2["required_attributes"]] == ["city"]
    assert page2["required_attributes"][0]["options"] == {"regex": "[A-Za-zА-Яа-яЁё -]+"}
    done = ok(app.post(SIGN_UP_CONTINUE, {"continuation_token": page2["continuation_token"], "grant_type": "attributes",
                                          "attributes": json.dumps({"city": "Санкт-Петербург"})}))
    assert done["continuation_token"] and done["expires_in"] > 0

    tokens = app.tokens({"continuation_token": done["continuation_token"], "grant_type": "continuation_token",
                         "username": email, "client_info": "true"})
    assert tokens["refresh_token"] and tokens["id_token"] and tokens["ext_expires_in"] == tokens["expires_in"]
    claims = app.verify_id_token(tokens["id_token"])
    assert claims["email"] == email.lower() and claims["email_verified"] is True
    assert claims["given_name"] == "Anna" and claims["family_name"] == "Liddell"
    assert claims.get("amr") == ["otp"], claims
    info = b64json(tokens["client_info"])
    assert info["uid"] == claims["sub"] and uuid.UUID(info["utid"])
    app.op.verify_access_token(tokens["access_token"], Client(APP, None, [], {}))
    error(app.post(TOKEN, {"continuation_token": done["continuation_token"], "grant_type": "continuation_token",
                           "scope": "openid"}), "invalid_grant")


def test_sign_up_with_a_password_then_sign_in_by_password_and_by_code(app, sink):
    email = unique("bob")
    done = app.sign_up(email, password=PASSWORD)
    error(app.post(TOKEN, {"continuation_token": done["continuation_token"], "grant_type": "continuation_token",
                           "username": unique("someone.else"), "scope": "openid"}), "invalid_request")
    tokens = app.tokens({"continuation_token": done["continuation_token"], "grant_type": "continuation_token"})
    assert app.verify_id_token(tokens["id_token"])["email"] == email

    error(app.sign_in_with_password(email, "not the passphrase at all"), "invalid_grant", codes=[50126])
    signed_in = ok(app.sign_in_with_password(email, PASSWORD, scope="openid email"))
    claims = app.verify_id_token(signed_in["id_token"])
    assert claims["email"] == email and claims["amr"] == ["pwd"]
    assert "refresh_token" not in signed_in, "no offline_access, no refresh token"

    # An app that can only type codes gets a code, even for an account with a password.
    before = len(sink.to(email))
    challenge = app.sign_in_code_challenge(email)
    assert sink.next_to(email, before).subject == "Your sign-in code"
    by_code = app.tokens({"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                          "oob": app.code(email, before)})
    assert app.verify_id_token(by_code["id_token"])["amr"] == ["otp"]


def test_with_protection_a_code_only_account_gets_the_password_challenge_an_unknown_address_gets(app):
    # The challenge depends only on what the app can do, so it tells nothing about the account;
    # the password then fails like any wrong one, and the app can ask for a code instead.
    email = unique("codeonly")
    app.sign_up(email)
    token = ok(app.post(INITIATE, {"username": email, "challenge_type": "password redirect"}))["continuation_token"]
    challenge = ok(app.post(CHALLENGE, {"continuation_token": token}))
    assert challenge["challenge_type"] == "password"
    error(app.post(TOKEN, {"continuation_token": challenge["continuation_token"], "grant_type": "password",
                           "password": "whatever it might be", "scope": "openid"}), "invalid_grant", codes=[50126])
    by_code = app.challenge(CHALLENGE, challenge["continuation_token"], challenge_type="oob redirect")
    assert by_code["challenge_type"] == "oob"


def test_a_password_or_attributes_before_the_code_are_refused_and_the_token_survives(app):
    email = unique("early")
    token = app.sign_up_start(email, attributes=json.dumps({"given_name": "L", "city": "Rome"}))
    challenge = app.challenge(SIGN_UP_CHALLENGE, token)
    for grant, value in (("password", {"password": PASSWORD}), ("attributes", {"attributes": json.dumps({"family_name": "E"})})):
        body = error(app.post(SIGN_UP_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": grant,
                                                 **value}), "invalid_request")
        assert "Verify the email address first" in body["error_description"]
    done = ok(app.post(SIGN_UP_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                                          "oob": app.code(email)}))
    assert done["expires_in"] > 0


def test_an_app_that_cannot_take_a_password_finishes_a_password_sign_up_in_the_browser(open_app):
    email = unique("nopw")
    token = open_app.sign_up_start(email, challenge_type="oob redirect",
                                   attributes=json.dumps({"given_name": "N", "city": "Nice"}))
    challenge = open_app.challenge(SIGN_UP_CHALLENGE, token)
    done = ok(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                                               "oob": open_app.code(email)}))
    assert done == {"challenge_type": "redirect"}
    error(open_app.post(INITIATE, {"username": email, "challenge_type": "oob redirect"}), "user_not_found")


def test_credential_required_when_the_server_insists_on_a_password(open_app):
    email = unique("cred")
    token = open_app.sign_up_start(email, attributes=json.dumps({"given_name": "C", "city": "Lima"}))
    challenge = open_app.challenge(SIGN_UP_CHALLENGE, token)
    required = error(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                                                      "oob": open_app.code(email)}), "credential_required", codes=[55103])
    asked = open_app.challenge(SIGN_UP_CHALLENGE, required["continuation_token"], challenge_type="oob password redirect")
    assert asked["challenge_type"] == "password"
    error(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": asked["continuation_token"], "grant_type": "password",
                                           "password": "12345678"}), "invalid_grant", "password_banned")
    done = ok(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": asked["continuation_token"], "grant_type": "password",
                                               "password": PASSWORD}))
    tokens = open_app.tokens({"continuation_token": done["continuation_token"], "grant_type": "continuation_token"})
    assert open_app.verify_id_token(tokens["id_token"])["email"] == email
    ok(open_app.sign_in_with_password(email, PASSWORD))


# ---------------------------------------------------------------------------
# Codes: wrong, too many, expired, resent


def test_wrong_codes_are_refused_and_after_five_the_code_stops_working(app, sink):
    email = unique("tries")
    app.sign_up(email)
    before = len(sink.to(email))
    challenge = app.sign_in_code_challenge(email)
    code = app.code(email, before)
    token = challenge["continuation_token"]
    for attempt in range(5):
        wrong = str((int(code) + 1 + attempt) % 10**CODE_LENGTH).zfill(CODE_LENGTH)
        body = error(app.post(TOKEN, {"continuation_token": token, "grant_type": "oob", "oob": wrong, "scope": "openid"}),
                     "invalid_grant", "invalid_oob_value")
    assert "new code" in body["error_description"]
    for shape_of_nonsense in ("12ab5678", "１２３４５６７８", "1234567"):
        error(app.post(TOKEN, {"continuation_token": token, "grant_type": "oob", "oob": shape_of_nonsense, "scope": "openid"}),
              "invalid_grant", "invalid_oob_value")
    locked = error(app.post(TOKEN, {"continuation_token": token, "grant_type": "oob", "oob": code, "scope": "openid"}),
                   "invalid_grant", "invalid_oob_value")
    assert "new code" in locked["error_description"], "the right code no longer works after five wrong ones"
    # A new code (the resend interval is 2 s here) works again.
    time.sleep(2.1)
    fresh = app.challenge(CHALLENGE, token)
    app.tokens({"continuation_token": fresh["continuation_token"], "grant_type": "oob", "oob": app.code(email, before + 1)},
               scope="openid")


def _parallel_wrong_codes(app: NativeApp, token: str, code: str, count: int) -> list[requests.Response]:
    def attempt(i: int) -> requests.Response:
        wrong = str((int(code) + 1 + i) % 10**CODE_LENGTH).zfill(CODE_LENGTH)
        return requests.post(app.issuer + TOKEN, data={"client_id": APP, "continuation_token": token, "grant_type": "oob",
                                                       "oob": wrong, "scope": "openid"}, timeout=30)
    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(attempt, range(count)))


def test_wrong_codes_sent_in_parallel_all_count_towards_the_limit(app, sink):
    email = unique("race")
    app.sign_up(email)
    before = len(sink.to(email))
    challenge = app.sign_in_code_challenge(email)
    code = app.code(email, before)
    answers = _parallel_wrong_codes(app, challenge["continuation_token"], code, 16)
    assert all(r.status_code == 400 and r.json().get("suberror") == "invalid_oob_value" for r in answers)
    compared = [r.json()["error_description"] for r in answers if not r.json()["error_description"].startswith("Too many")]
    assert len(compared) <= 5, f"{len(compared)} of 16 parallel guesses were compared with the code: {compared}"
    right = app.post(TOKEN, {"continuation_token": challenge["continuation_token"], "grant_type": "oob", "oob": code,
                             "scope": "openid"})
    error(right, "invalid_grant", "invalid_oob_value")


def test_a_continuation_token_signs_in_once_even_when_sent_twice_at_the_same_time(app, sink):
    email = unique("twice")
    app.sign_up(email)
    before = len(sink.to(email))
    challenge = app.sign_in_code_challenge(email)
    code = app.code(email, before)
    form = {"client_id": APP, "continuation_token": challenge["continuation_token"], "grant_type": "oob", "oob": code,
            "scope": "openid"}
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: requests.post(app.issuer + TOKEN, data=form, timeout=30), range(4)))
    assert sorted(r.status_code for r in answers) == [200, 400, 400, 400], [r.text for r in answers]


def test_resend_waits_for_the_interval_and_the_new_code_replaces_the_old(app, sink):
    email = unique("resend")
    app.sign_up(email)
    before = len(sink.to(email))
    challenge = app.sign_in_code_challenge(email)
    first = app.code(email, before)
    early = app.post(CHALLENGE, {"continuation_token": challenge["continuation_token"]})
    body = error(early, "slow_down", status=429)
    assert 1 <= body["retry_after"] <= 2 and early.headers.get("Retry-After") == str(body["retry_after"])
    time.sleep(body["retry_after"] + 0.1)
    resent = app.challenge(CHALLENGE, challenge["continuation_token"])
    second = app.code(email, before + 1)
    token = resent["continuation_token"]
    # The token of the first challenge was used up by the resend.
    error(app.post(TOKEN, {"continuation_token": challenge["continuation_token"], "grant_type": "oob", "oob": second,
                           "scope": "openid"}), "invalid_grant", codes=[55200])
    if first != second:
        error(app.post(TOKEN, {"continuation_token": token, "grant_type": "oob", "oob": first, "scope": "openid"}),
              "invalid_grant", "invalid_oob_value")
    app.tokens({"continuation_token": token, "grant_type": "oob", "oob": second}, scope="openid")


def test_an_expired_code_is_refused_and_a_new_one_works(open_app, sink):
    email = unique("expiry")
    open_app.sign_up(email, password=PASSWORD)
    before = len(sink.to(email))
    challenge = open_app.sign_in_code_challenge(email)
    asked = time.monotonic()
    mail = sink.next_to(email, before)
    code = mail.code(CODE_LENGTH)
    time.sleep(max(0.0, 4.3 - (time.monotonic() - asked)))
    expired = error(open_app.post(TOKEN, {"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                                          "oob": code, "scope": "openid"}), "invalid_grant", "invalid_oob_value")
    assert "expired" in expired["error_description"]
    fresh = open_app.challenge(CHALLENGE, challenge["continuation_token"])
    open_app.tokens({"continuation_token": fresh["continuation_token"], "grant_type": "oob",
                     "oob": open_app.code(email, before + 1)}, scope="openid")


# ---------------------------------------------------------------------------
# Passwords and attributes


@pytest.mark.parametrize("password, suberror", [
    ("short", "password_too_short"),
    ("x" * 257, "password_too_long"),
    ("password1", "password_banned"),
    ("qwertyuiop", "password_banned"),
    ("abcdefghij", "password_too_weak"),
])
def test_a_refused_password_gets_its_suberror(app, password, suberror):
    email = unique("pw")
    error(app.post(SIGN_UP_START, {"username": email, "challenge_type": "oob password redirect", "password": password,
                                   "attributes": json.dumps({"given_name": "P", "city": "Oslo"})}),
          "invalid_grant", suberror, codes=[399246])


def test_the_address_itself_is_too_weak_a_password(app):
    email = unique("samepw")
    body = error(app.post(SIGN_UP_START, {"username": email, "challenge_type": "oob password redirect", "password": email}),
                 "invalid_grant", "password_too_weak")
    assert body["error_description"]


def test_attributes_are_validated_and_every_problem_is_listed(app):
    email = unique("attrs")
    start = {"username": email, "challenge_type": "oob redirect"}
    body = error(app.post(SIGN_UP_START, {**start, "attributes": json.dumps(
        {"given_name": "A", "city": "<script>", "birthdate": "2001-02-30", "unknown": "ignored"})}),
        "invalid_grant", "attribute_validation_failed")
    assert sorted(a["name"] for a in body["invalid_attributes"]) == ["birthdate", "city"]
    assert all(a.get("reason") for a in body["invalid_attributes"])
    long_name = error(app.post(SIGN_UP_START, {**start, "attributes": json.dumps({"given_name": "x" * 257})}),
                      "invalid_grant", "attribute_validation_failed")
    assert [a["name"] for a in long_name["invalid_attributes"]] == ["given_name"]
    for not_an_object in ("not json", "[1, 2]", '"text"'):
        error(app.post(SIGN_UP_START, {**start, "attributes": not_an_object}), "invalid_request")
    # Strings are accepted for values of other types; unknown names are ignored.
    ok(app.post(SIGN_UP_START, {**start, "attributes": json.dumps({"birthdate": "2001-02-03", "whatever": 1})}))


# ---------------------------------------------------------------------------
# Password reset


def test_password_reset_end_to_end_ends_old_refresh_tokens(app, sink):
    email = unique("reset")
    old_password, new_password = PASSWORD, "a brand new passphrase for reset"
    app.sign_up(email, password=old_password)
    signed_in = ok(app.sign_in_with_password(email, old_password))
    old_refresh = signed_in["refresh_token"]
    # The refresh token works before the reset, at both token endpoints.
    rotated = app.tokens({"grant_type": "refresh_token", "refresh_token": old_refresh})
    old_refresh = rotated.get("refresh_token", old_refresh)

    before = len(sink.to(email))
    token = ok(app.post(RESET_START, {"username": email, "challenge_type": "oob redirect"}))["continuation_token"]
    challenge = app.challenge(RESET_CHALLENGE, token)
    assert challenge["challenge_type"] == "oob" and challenge["code_length"] == CODE_LENGTH
    mail = sink.next_to(email, before)
    assert mail.subject == "Your password reset code"
    error(app.post(RESET_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": "password",
                                    "oob": mail.code()}), "invalid_grant")
    verified = ok(app.post(RESET_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                                            "oob": mail.code()}))
    assert 0 < verified["expires_in"] <= 600
    error(app.post(RESET_SUBMIT, {"continuation_token": verified["continuation_token"], "new_password": "iloveyou"}),
          "invalid_grant", "password_banned")
    submitted = ok(app.post(RESET_SUBMIT, {"continuation_token": verified["continuation_token"],
                                           "new_password": new_password}))
    assert submitted["poll_interval"] >= 0
    poll = ok(app.post(RESET_POLL, {"continuation_token": submitted["continuation_token"]}))
    assert poll["status"] == "succeeded" and poll["continuation_token"]
    assert sink.next_to(email, before + 1).subject == "Your password was changed"

    error(app.post(TOKEN, {"grant_type": "refresh_token", "refresh_token": old_refresh}), "invalid_grant")
    standard = app.http.post(app.op.endpoint("token_endpoint"), data={"grant_type": "refresh_token", "client_id": APP,
                                                                      "refresh_token": old_refresh}, timeout=30)
    assert standard.status_code == 400 and standard.json()["error"] == "invalid_grant", standard.text

    after = app.tokens({"continuation_token": poll["continuation_token"], "grant_type": "continuation_token",
                        "username": email})
    assert app.verify_id_token(after["id_token"])["email"] == email
    error(app.sign_in_with_password(email, old_password), "invalid_grant", codes=[50126])
    ok(app.sign_in_with_password(email, new_password))


# ---------------------------------------------------------------------------
# Enumeration protection


def test_protection_on_sign_up_answers_an_existing_address_as_a_new_one(app, sink):
    existing, new = unique("exists"), unique("fresh")
    app.sign_up(existing)
    before = len(sink.to(existing))
    attributes = json.dumps({"given_name": "E", "city": "Paris"})
    starts = [app.post(SIGN_UP_START, {"username": e, "challenge_type": "oob password redirect", "attributes": attributes})
              for e in (existing, new)]
    assert shape(starts[0]) == shape(starts[1]) == (200, ["continuation_token"], None, None, None, None)
    challenges = [app.post(SIGN_UP_CHALLENGE, {"continuation_token": s.json()["continuation_token"]}) for s in starts]
    assert shape(challenges[0]) == shape(challenges[1])
    assert challenges[0].json()["code_length"] == challenges[1].json()["code_length"]
    guesses = [app.post(SIGN_UP_CONTINUE, {"continuation_token": c.json()["continuation_token"], "grant_type": "oob",
                                           "oob": "1" * CODE_LENGTH}) for c in challenges]
    assert shape(guesses[0]) == shape(guesses[1]) and guesses[0].json()["suberror"] == "invalid_oob_value"

    notice = sink.next_to(existing, before)
    assert notice.subject == "You already have an account"
    assert not re.search(rf"(?<!\d)\d{{{CODE_LENGTH}}}(?!\d)", notice.text + notice.html), "no code in the notice"
    assert sink.next_to(new).code(CODE_LENGTH)


def test_protection_on_sign_in_answers_an_unknown_address_as_a_known_one_up_to_the_credential_check(app, sink):
    known, unknown = unique("known"), unique("unknown")
    app.sign_up(known, password=PASSWORD)
    before = len(sink.to(known))

    def password_attempt(email):
        initiate = app.post(INITIATE, {"username": email, "challenge_type": "oob password redirect"})
        challenge = app.post(CHALLENGE, {"continuation_token": initiate.json()["continuation_token"]})
        token = app.post(TOKEN, {"continuation_token": challenge.json()["continuation_token"], "grant_type": "password",
                                 "password": "wrong password entirely", "scope": "openid"})
        return initiate, challenge, token

    for a, b in zip(password_attempt(known), password_attempt(unknown)):
        assert shape(a) == shape(b), (a.text, b.text)
    assert password_attempt(unknown)[2].json()["error_codes"] == [50126]

    codes = [app.post(CHALLENGE, {"continuation_token": ok(app.post(INITIATE, {"username": e, "challenge_type": "oob redirect"}))
                                  ["continuation_token"]}) for e in (known, unknown)]
    assert shape(codes[0]) == shape(codes[1]) and codes[0].json()["challenge_type"] == "oob"
    guesses = [app.post(TOKEN, {"continuation_token": c.json()["continuation_token"], "grant_type": "oob",
                                "oob": "2" * CODE_LENGTH, "scope": "openid"}) for c in codes]
    assert shape(guesses[0]) == shape(guesses[1])
    resets = [app.post(RESET_START, {"username": e, "challenge_type": "oob redirect"}) for e in (known, unknown)]
    assert shape(resets[0]) == shape(resets[1])
    reset_challenges = [app.post(RESET_CHALLENGE, {"continuation_token": r.json()["continuation_token"]}) for r in resets]
    assert shape(reset_challenges[0]) == shape(reset_challenges[1])

    sink.next_to(known, before + 1)  # the sign-in code and the reset code reached the known address
    time.sleep(0.5)
    assert sink.to(unknown) == [], "nothing is sent to an address without an account"


def test_protection_on_sign_in_does_not_tell_a_code_only_account_from_an_unknown_address(app):
    code_only, unknown = unique("codeonlyknown"), unique("codeonlyunknown")
    app.sign_up(code_only)
    for challenge_type in ("oob password redirect", "password redirect"):
        answers = []
        for email in (code_only, unknown):
            token = ok(app.post(INITIATE, {"username": email, "challenge_type": challenge_type}))["continuation_token"]
            answers.append(app.post(CHALLENGE, {"continuation_token": token}))
        assert shape(answers[0]) == shape(answers[1]), (challenge_type, answers[0].text, answers[1].text)


def test_protection_off_says_user_already_exists_and_user_not_found(open_app):
    existing, nobody = unique("there"), unique("nobody")
    open_app.sign_up(existing, password=PASSWORD)
    error(open_app.post(SIGN_UP_START, {"username": existing, "challenge_type": "oob redirect"}),
          "user_already_exists", codes=[1003037])
    for path in (INITIATE, RESET_START):
        error(open_app.post(path, {"username": nobody, "challenge_type": "oob password redirect"}),
              "user_not_found", codes=[50034])
    ok(open_app.post(INITIATE, {"username": existing, "challenge_type": "oob password redirect"}))


def test_nothing_is_half_done_a_failed_step_leaves_no_account(open_app, sink):
    email = unique("half")

    def account_exists() -> bool:
        r = open_app.post(INITIATE, {"username": email, "challenge_type": "oob redirect"})
        if r.status_code == 200:
            return True
        error(r, "user_not_found")
        return False

    error(open_app.post(SIGN_UP_START, {"username": email, "challenge_type": "oob redirect",
                                        "attributes": json.dumps({"given_name": "H", "city": "1234"})}),
          "invalid_grant", "attribute_validation_failed")
    assert not account_exists()
    token = open_app.sign_up_start(email, password=PASSWORD)
    challenge = open_app.challenge(SIGN_UP_CHALLENGE, token)
    page1 = error(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": challenge["continuation_token"], "grant_type": "oob",
                                                   "oob": open_app.code(email)}), "attributes_required")
    assert not account_exists(), "a verified address is not an account yet"
    refused = error(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": page1["continuation_token"], "grant_type": "attributes",
                                                     "attributes": json.dumps({"given_name": "H", "city": "9 Elms"})}),
                    "invalid_grant", "attribute_validation_failed")
    assert [a["name"] for a in refused["invalid_attributes"]] == ["city"]
    assert not account_exists()
    # The refused step wrote nothing: its token still works, and given_name was not kept.
    page1_again = error(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": page1["continuation_token"],
                                                         "grant_type": "attributes", "attributes": json.dumps({"family_name": "X"})}),
                        "attributes_required")
    assert [a["name"] for a in page1_again["required_attributes"]] == ["given_name"]
    page2 = error(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": page1_again["continuation_token"],
                                                   "grant_type": "attributes", "attributes": json.dumps({"given_name": "H"})}),
                  "attributes_required")
    assert not account_exists()
    ok(open_app.post(SIGN_UP_CONTINUE, {"continuation_token": page2["continuation_token"], "grant_type": "attributes",
                                        "attributes": json.dumps({"city": "Elms"})}))
    assert account_exists()


# ---------------------------------------------------------------------------
# Clients and requests the API refuses


@pytest.mark.parametrize("path", ALL_PATHS)
def test_a_client_that_is_not_first_party_may_not_use_the_api(app, path):
    data = {"username": unique("tp"), "challenge_type": "oob redirect", "continuation_token": "x", "grant_type": "oob"}
    error(app.post(path, data, client_id=THIRD_PARTY), "invalid_client", "nativeauthapi_disabled")
    error(app.post(path, data, client_id="no-such-client"), "unauthorized_client")


def test_a_confidential_first_party_client_must_authenticate(app):
    data = {"username": unique("conf"), "challenge_type": "oob redirect"}
    error(app.post(INITIATE, data, client_id=CONFIDENTIAL), "invalid_client", status=401)
    error(app.post(INITIATE, data, client_id=CONFIDENTIAL, auth=(CONFIDENTIAL, "wrong-secret-0123456789-0123456789")),
          "invalid_client", status=401)
    ok(app.post(INITIATE, data, client_id=CONFIDENTIAL, auth=(CONFIDENTIAL, CONFIDENTIAL_SECRET)))
    ok(app.post(INITIATE, {**data, "client_secret": CONFIDENTIAL_SECRET}, client_id=CONFIDENTIAL))


def test_a_failed_basic_authentication_is_answered_with_www_authenticate(app):
    r = app.post(INITIATE, {"username": unique("conf"), "challenge_type": "oob redirect"}, client_id=CONFIDENTIAL,
                 auth=(CONFIDENTIAL, "wrong-secret-0123456789-0123456789"))
    assert r.status_code == 401 and r.headers.get("WWW-Authenticate", "").lower().startswith("basic")


def test_challenge_types_usernames_and_tokens_get_the_reference_errors(app):
    email = unique("bad")
    error(app.post(SIGN_UP_START, {"username": email, "challenge_type": "oob password"}), "unsupported_challenge_type",
          codes=[901007])
    body = error(app.post(INITIATE, {"username": email, "challenge_type": "oob sms redirect"}), "invalid_request")
    assert "The challenge_type list parameter contains an unsupported challenge type" in body["error_description"]
    body = error(app.post(INITIATE, {"username": "not-an-address", "challenge_type": "oob redirect"}), "invalid_request",
                 codes=[90100])
    assert "username parameter is empty or not valid" in body["error_description"]
    assert ok(app.post(INITIATE, {"username": email, "challenge_type": "redirect"})) == {"challenge_type": "redirect"}
    error(app.post(CHALLENGE, {"continuation_token": "forged"}), "invalid_grant", codes=[55200])
    error(app.post(SIGN_UP_CONTINUE, {"continuation_token": "forged", "grant_type": "oob", "oob": "1"}), "invalid_request",
          codes=[55200])
    sign_in = ok(app.post(INITIATE, {"username": email, "challenge_type": "oob redirect"}))["continuation_token"]
    error(app.post(SIGN_UP_CHALLENGE, {"continuation_token": sign_in}), "invalid_grant")
    error(app.post(TOKEN, {"grant_type": "authorization_code", "code": "x"}), "unsupported_grant_type")
    error(app.http.post(app.issuer + INITIATE, json={"client_id": APP}, timeout=10), "invalid_request")
    twice = app.http.post(app.issuer + INITIATE, data=[("client_id", APP), ("username", email), ("username", email),
                                                       ("challenge_type", "oob redirect")], timeout=10)
    error(twice, "invalid_request")


# ---------------------------------------------------------------------------
# Fuzzing the OpenAPI document's operations: no answer may be a 5xx

FUZZ_EXAMPLES = 30


def test_fuzzed_requests_never_get_a_server_error(native, workdir):
    """schemathesis over the served document: every operation, up to FUZZ_EXAMPLES cases
    each in its example, coverage and fuzzing phases (valid and invalid requests). No
    answer may be a 5xx, and each must be one the document describes (status, content
    type, body schema), which keeps the document honest. The examples phase sends every
    operation the document's examples: none may be skipped."""
    from test_api_fuzz import assert_no_operation_skipped, schemathesis_options

    checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
    document = native.issuer + "/openapi/native-auth.json"
    events = workdir / "native-fuzz.ndjson"
    options = schemathesis_options(requests.get(document, timeout=10).json(), workdir / "native-schemathesis.toml")
    # One worker: with two threads, hypothesis describing its strategies parses lambda sources
    # concurrently, and CPython 3.11's parser can fail at that ("AST constructor recursion
    # depth mismatch"), a crash of the tool that says nothing about the server.
    command = [str(Path(sys.executable).with_name("schemathesis")), *options, "run", document,
               "--checks", checks, "--max-examples", str(FUZZ_EXAMPLES), "--phases", "examples,coverage,fuzzing",
               "--seed", "20261122", "--no-shrink", "--generation-database", "none", "--workers", "1",
               "--request-timeout", "30", "--no-color", "--report", "junit,ndjson",
               "--report-junit-path", str(workdir / "native-fuzz-junit.xml"), "--report-ndjson-path", str(events)]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "schemathesis_hooks", "NATIVE_FUZZ_CLIENT_ID": APP,
           "PYTHONPATH": str(Path(__file__).parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"schemathesis found problems:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    assert_no_operation_skipped(done.stdout, events)
    generated = re.search(r"(\d+) generated", done.stdout)
    assert generated and int(generated.group(1)) >= 11 * FUZZ_EXAMPLES // 2, done.stdout[-2000:]


# ---------------------------------------------------------------------------
# The end of the outage begun first


def test_the_code_asked_for_during_the_outage_arrives_after_the_relay_is_back_and_works(smtp_outage, sink, app):
    email = smtp_outage["email"]
    # The retry is due 60 s after the failed attempt; the worker looks every 15 s, and at
    # once when another email is queued, which the nudge below does.
    def arrived(timeout: float):
        try:
            return sink.next_to(email, smtp_outage["before"], max(0.0, timeout))
        except AssertionError:
            return None

    mail = arrived(smtp_outage["failed_at"] + 61 - time.monotonic())
    if mail is None:
        app.post(SIGN_UP_CHALLENGE, {"continuation_token": app.sign_up_start(unique("nudge"))})
        mail = arrived(smtp_outage["failed_at"] + OUTAGE_RETRY_DEADLINE - time.monotonic())
    waited = time.monotonic() - smtp_outage["failed_at"]
    assert mail is not None, f"the code was not delivered within {waited:.0f} s of the failed attempt"
    print(f"outage mail delivered {waited:.1f} s after the failed attempt")
    tokens = smtp_outage["app"].tokens({"continuation_token": smtp_outage["token"], "grant_type": "oob",
                                        "oob": mail.code(CODE_LENGTH)}, scope="openid email")
    assert smtp_outage["app"].verify_id_token(tokens["id_token"])["email"] == email
