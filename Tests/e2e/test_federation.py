"""Federation: signing in to Tessera through upstream providers (issue 7).

Three servers of this module's own:
- the Apple stand-in (apple_standin.py), which behaves as Apple documents Sign in with
  Apple: ES256 client secrets checked against the team's key, RS256 ID tokens, JWKS,
  form_post callbacks served from `localhost` (so the POST back is cross-site, as Apple's
  is), `user` JSON only on the first authorization, revocation, notifications;
- "Corp ID", a second real `tessera serve` (its own database, issuer on `localhost` so its
  cookies don't mix with the downstream's), as the upstream OpenID provider;
- the downstream `tessera serve` under test, with both in `upstream_providers` (--config).

The browser is emulated with `requests` (cookies; a cross-site form POST carries only
SameSite=None cookies, as in a browser); two Selenium tests press each button in headless
Chromium. The first tests check the stand-in itself against Apple's documented behaviour.
"""

from __future__ import annotations

import html
import re

import hashlib
import json
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, RSAKey

from apple_standin import (APPLE_AUDIENCE, AppleAccount, AppleStandIn, decode_unverified, flip_signature, half_hash,
                           nonce_hash)
from e2e_support import (new_database, CLI, Client, Page, Provider, TesseraServer, User, UserAgent, assert_oauth_error, assert_tokens,
                         free_port, parse_page, query_url, random_token, s256)

TEAM_ID = "ABCDE12345"
KEY_ID = "KEY1234567"
APPLE_WEB = "com.example.web"  # the Services ID Tessera uses on the web
APPLE_APP = "com.example.app"  # the iOS app's bundle id (native_client_ids)
NATIVE_CLIENT = "fed-ios-app"  # the iOS app as a Tessera client
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
PASSWORD = "federation e2e passphrase 42"
SCOPE = "openid profile email offline_access"
# Every request comes from 127.0.0.1, and the release binary signs in faster than the default
# share of sign-ins started per address a minute (60): the limits must not get in the way here.
SERVER_ENV = {"TESSERA_LOGIN_FAILURES_PER_ADDRESS": "1000", "TESSERA_LOG_LEVEL": "info",
              "TESSERA_FLOWS_PER_ADDRESS": "100000", "TESSERA_HASHING_PER_ADDRESS": "100000"}


def unique_email(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}@example.com"


def apple_jwt_secret(key_path: Path, *, client_id: str = APPLE_WEB, team_id: str = TEAM_ID, kid: str = KEY_ID,
                     lifetime: int = 3600, iat: int | None = None, aud: str = APPLE_AUDIENCE, alg: str = "ES256",
                     sub: str | None = None) -> str:
    """A client secret as a relying party makes it from its .p8 (for the stand-in's own checks)."""
    key = ECKey.import_key(key_path.read_bytes())
    now = int(time.time()) if iat is None else iat
    claims = {"iss": team_id, "iat": now, "exp": now + lifetime, "aud": aud, "sub": sub or client_id}
    return jwt.encode({"alg": alg, "kid": kid}, claims, key, algorithms=[alg])


# ---------------------------------------------------------------------------
# The stand-in, alone: it must behave as Apple does before it can judge Tessera


@pytest.fixture(scope="module")
def standin():
    apple = AppleStandIn().start()
    yield apple
    apple.stop()


@pytest.fixture(scope="module")
def team_key(standin, tmp_path_factory) -> Path:
    return standin.generate_team_key(tmp_path_factory.mktemp("apple"), TEAM_ID, KEY_ID)


@pytest.fixture(scope="module")
def standin_alone(standin, team_key):
    """A client of the stand-in's own, for checking the stand-in without Tessera."""
    standin.register_client("com.example.selfcheck", TEAM_ID, ["http://127.0.0.1:9/apple/callback"])
    return standin


def test_standin_client_secret_is_checked_as_apple_does(standin_alone, team_key):
    apple, cid = standin_alone, "com.example.selfcheck"
    assert apple.check_client_secret(cid, apple_jwt_secret(team_key, client_id=cid))[0]
    other_key = Path(str(team_key) + ".other")
    other_key.write_bytes(ECKey.generate_key("P-256").as_pem(private=True))
    bad = {
        "other team": apple_jwt_secret(team_key, client_id=cid, team_id="ZZZZZ99999"),
        "other key id": apple_jwt_secret(team_key, client_id=cid, kid="NOPE000000"),
        "sub is not the client": apple_jwt_secret(team_key, client_id=cid, sub="com.example.other"),
        "aud": apple_jwt_secret(team_key, client_id=cid, aud="https://example.com"),
        "expired": apple_jwt_secret(team_key, client_id=cid, iat=int(time.time()) - 7200),
        "more than six months": apple_jwt_secret(team_key, client_id=cid, lifetime=15777001),
        "signed by another key": apple_jwt_secret(other_key, client_id=cid),
        "not a JWT": "secret",
    }
    for why, secret in bad.items():
        ok, reason, _ = apple.check_client_secret(cid, secret)
        assert not ok, f"{why} was accepted"
        r = requests.post(apple.base + "/auth/token", data={"client_id": cid, "client_secret": secret,
                                                            "grant_type": "authorization_code", "code": "x"}, timeout=10)
        assert (r.status_code, r.json()) == (400, {"error": "invalid_client"}), (why, r.text)


def test_standin_authorize_posts_the_user_json_once_and_codes_are_single_use(standin_alone, team_key):
    apple, cid, cb = standin_alone, "com.example.selfcheck", "http://127.0.0.1:9/apple/callback"
    account = apple.add_account("selfcheck", unique_email("selfcheck"), "Ada", "Lovelace")
    apple.next_account = "selfcheck"
    http = requests.Session()
    # unknown client, unregistered return URL, name/email without form_post: error pages, no redirect
    for query in ({"client_id": "nope", "redirect_uri": cb}, {"client_id": cid, "redirect_uri": cb + "x"},
                  {"client_id": cid, "redirect_uri": cb, "response_mode": "query"}):
        r = http.get(apple.browser_base + "/auth/authorize", params={"response_type": "code", "scope": "name email",
                                                                     "state": "s", **query}, allow_redirects=False)
        assert r.status_code == 400 and "Location" not in r.headers, r.text

    def authorize(state):
        r = http.get(apple.browser_base + "/auth/authorize", params={
            "client_id": cid, "redirect_uri": cb, "response_type": "code id_token", "scope": "name email",
            "response_mode": "form_post", "state": state, "nonce": "n-" + state})
        form = parse_page(r.text).form(action="/auth/authorize/continue")
        r = http.post(apple.browser_base + form.action, data={**form.fields, "decision": "continue"})
        posted = parse_page(r.text).form(id="apple-response")
        assert posted.action == cb and posted.method == "post"
        return posted.fields

    first = authorize("one")
    assert first["state"] == "one" and first["code"]
    assert json.loads(first["user"]) == {"name": {"firstName": "Ada", "lastName": "Lovelace"}, "email": account.email}
    claims = jwt.decode(first["id_token"], KeySet.import_key_set(http.get(apple.base + "/auth/keys").json())).claims
    assert claims["nonce"] == "n-one" and claims["c_hash"] == half_hash(first["code"]) and claims["aud"] == cid
    second = authorize("two")
    assert "user" not in second, "Apple sends the user JSON only on the first authorization"

    secret = apple_jwt_secret(team_key, client_id=cid)
    redeem = {"client_id": cid, "client_secret": secret, "grant_type": "authorization_code", "code": second["code"],
              "redirect_uri": cb}
    assert requests.post(apple.base + "/auth/token", data={**redeem, "redirect_uri": cb + "x"}).json()["error"] == "invalid_grant"
    redeem["code"] = first["code"]
    body = requests.post(apple.base + "/auth/token", data=redeem).json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600 and body["refresh_token"], body
    claims = jwt.decode(body["id_token"], KeySet.import_key_set(apple.jwks())).claims
    assert claims["at_hash"] == half_hash(body["access_token"]) and claims["sub"] == account.sub
    assert claims["email_verified"] is True and claims["is_private_email"] is False and claims["nonce"] == "n-one"
    again = requests.post(apple.base + "/auth/token", data=redeem)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant"), "codes are single use"
    refreshed = requests.post(apple.base + "/auth/token", data={"client_id": cid, "client_secret": secret,
                                                                "grant_type": "refresh_token",
                                                                "refresh_token": body["refresh_token"]}).json()
    assert refreshed["access_token"] and "refresh_token" not in refreshed
    r = requests.post(apple.base + "/auth/revoke", data={"client_id": cid, "client_secret": secret,
                                                         "token": body["refresh_token"], "token_type_hint": "refresh_token"})
    assert r.status_code == 200 and body["refresh_token"] in apple.revoked_refresh_tokens()
    r = requests.post(apple.base + "/auth/token", data={"client_id": cid, "client_secret": secret,
                                                        "grant_type": "refresh_token", "refresh_token": body["refresh_token"]})
    assert r.json()["error"] == "invalid_grant"


def test_standin_native_tokens_notifications_and_key_rotation(standin_alone):
    apple = standin_alone
    account = apple.add_account("selfcheck-native", unique_email("native"), is_private_email=True)
    given = apple.native_authorization("com.example.selfcheck", account, "raw-nonce")
    claims = jwt.decode(given["identity_token"], KeySet.import_key_set(apple.jwks())).claims
    assert claims["nonce"] == hashlib.sha256(b"raw-nonce").hexdigest() == nonce_hash("raw-nonce")
    assert claims["is_private_email"] is True and claims["c_hash"] == half_hash(given["authorization_code"])
    with pytest.raises(Exception):
        jwt.decode(flip_signature(given["identity_token"]), KeySet.import_key_set(apple.jwks()))
    payload = apple.notification_payload("com.example.selfcheck", "email-disabled", account)
    event = json.loads(jwt.decode(payload, KeySet.import_key_set(apple.jwks())).claims["events"])
    assert event["type"] == "email-disabled" and event["sub"] == account.sub and event["email"] == account.email
    old = apple.current_kid
    new = apple.rotate_key()
    kids = [k["kid"] for k in apple.jwks()["keys"]]
    assert old in kids and new in kids and decode_unverified(apple.identity_token(account, "x"))[0]["kid"] == new


# ---------------------------------------------------------------------------
# The three servers


@dataclass
class Federation:
    apple: AppleStandIn
    key_path: Path
    down: TesseraServer
    corp: TesseraServer
    down_cli: CLI
    corp_cli: CLI
    op: Provider
    corp_op: Provider
    clients: dict[str, Client]
    users: dict[str, User]
    corp_users: dict[str, User]
    corp_client: Client
    config: dict
    workdir: Path

    @property
    def apple_callback(self) -> str:
        return self.down.issuer + "/federation/apple/callback"

    @property
    def corp_callback(self) -> str:
        return self.down.issuer + "/federation/corp/callback"


def _client(cli: CLI, name: str, **spec) -> Client:
    reg = cli.add_client(name, **spec)
    return Client(reg["client_id"], reg.get("client_secret"), reg["redirect_uris"], reg,
                  post_logout_redirect_uris=reg.get("post_logout_redirect_uris", []))


def _user(cli: CLI, email: str, name: str | None = None) -> User:
    reg = cli.add_user(email, PASSWORD, name)
    return User(reg["id"], reg["email"], PASSWORD, reg["profile"].get("name"))


def _start(server: TesseraServer) -> TesseraServer:
    return server.start()


@pytest.fixture(scope="module")
def fed(binary, workdir, standin, team_key, callback) -> Federation:
    down_port, corp_port = free_port(), free_port()
    down_issuer = f"http://127.0.0.1:{down_port}"
    corp_issuer = f"http://localhost:{corp_port}"
    standin.register_client(APPLE_WEB, TEAM_ID, [down_issuer + "/federation/apple/callback"])
    standin.register_client(APPLE_APP, TEAM_ID)

    corp_db, down_db = new_database(workdir, "fed-corp"), new_database(workdir, "fed-down")
    corp_cli, down_cli = CLI(binary, corp_db, workdir), CLI(binary, down_db, workdir)
    cb = callback.base

    def corp_side():
        client = _client(corp_cli, "Downstream Tessera", redirect_uris=[down_issuer + "/federation/corp/callback"],
                         first_party=True)
        corp = TesseraServer(binary, corp_db, workdir, port=corp_port, env=SERVER_ENV, name="fed-corp",
                             args=["--issuer", corp_issuer])
        corp.issuer = corp_issuer
        with ThreadPoolExecutor(1) as pool:
            started = pool.submit(corp.start)
            users = {name: _user(corp_cli, email, full) for name, email, full in [
                ("newcomer", unique_email("corp-newcomer"), "Nora Newcomer"),
                ("erin", "erin@example.com", "Erin Upstream"),
                ("browser", unique_email("corp-browser"), "Bea Browser"),
            ]}
            started.result()
        return corp, client, users

    def down_side():
        clients = {
            "web": _client(down_cli, "Federated Web App", redirect_uris=[cb + "/fed"]),
            "first": _client(down_cli, "Federated First-party", redirect_uris=[cb + "/fed-first"], first_party=True),
            "ios": _client(down_cli, "Federated iOS App", client_id=NATIVE_CLIENT, public=True, first_party=True,
                           redirect_uris=[cb + "/fed-ios"]),
        }
        users = {name: _user(down_cli, email, full) for name, email, full in [
            ("dora", unique_email("dora"), "Dora Downstream"),
            ("erin", "erin@example.com", "Erin Downstream"),
            ("frank", unique_email("frank"), "Frank Native"),
            ("gina", unique_email("gina"), "Gina Linked"),
            ("hugo", unique_email("hugo"), "Hugo Notified"),
        ]}
        return clients, users

    with ThreadPoolExecutor(2) as pool:
        corp_future, down_future = pool.submit(corp_side), pool.submit(down_side)
        corp, corp_client, corp_users = corp_future.result()
        clients, users = down_future.result()

    config = {"upstream_providers": [
        {"id": "apple", "type": "apple", "name": "Apple", "client_id": APPLE_WEB, "team_id": TEAM_ID, "key_id": KEY_ID,
         "private_key_path": str(team_key), "native_client_ids": [APPLE_APP], **standin.endpoints},
        {"id": "corp", "type": "oidc", "name": "Corp ID", "issuer": corp.issuer, "client_id": corp_client.client_id,
         "client_secret": corp_client.client_secret, "scopes": ["openid", "email", "profile"]},
    ]}
    config_path = workdir / "fed-config.json"
    config_path.write_text(json.dumps(config, indent=2))
    down = TesseraServer(binary, down_db, workdir, port=down_port, env=SERVER_ENV, name="fed-down",
                         args=["--config", str(config_path)])
    down.start()
    federation = Federation(standin, team_key, down, corp, down_cli, corp_cli, Provider(down.issuer),
                            Provider(corp.issuer), clients, users, corp_users, corp_client, config, workdir)
    yield federation
    down.stop()
    corp.stop()


# ---------------------------------------------------------------------------
# A user agent: cookies, redirects, the hosted pages, the upstream's pages


def _same_site(cookie) -> str:
    for name, value in getattr(cookie, "_rest", {}).items():
        if name.lower() == "samesite":
            return (value or "").lower()
    return "lax"  # browsers' default


@dataclass
class Outcome:
    kind: str  # redirect (to the client), consent, link, login, page, other
    response: requests.Response
    page: Page | None = None
    params: dict[str, str] = field(default_factory=dict)
    location: str | None = None
    seen: list[str] = field(default_factory=list)

    @property
    def code(self) -> str | None:
        return self.params.get("code")

    def describe(self) -> str:
        text = self.page.text[:400] if self.page else self.response.text[:400]
        return (f"{self.kind} after {self.seen}: {self.response.status_code} {self.response.url} "
                f"params={self.params} location={self.location} title={self.page.title if self.page else None!r}: {text}")


class Visitor:
    """One person's browser, without JavaScript."""

    def __init__(self, fed: Federation, accept_language: str | None = None):
        self.fed = fed
        self.http = requests.Session()
        if accept_language:
            self.http.headers["Accept-Language"] = accept_language
        self.sent: dict[str, str] = {}
        self.verifier: str | None = None
        self.upstream_request: dict[str, str] = {}

    # the client's authorization request at the downstream

    def login_page(self, client: Client, scope: str = SCOPE, **extra) -> tuple[requests.Response, Page]:
        self.verifier = random_token(48)
        self.sent = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
                     "scope": scope, "state": random_token(12), "nonce": random_token(12),
                     "code_challenge": s256(self.verifier), "code_challenge_method": "S256", **extra}
        r = self.http.get(self.fed.op.endpoint("authorization_endpoint"), params=self.sent, allow_redirects=False,
                          timeout=30)
        for _ in range(5):  # a login page may be one redirect away
            if r.status_code in (302, 303) and r.headers["Location"].startswith(("/", self.fed.down.issuer)):
                r = self.http.get(urljoin(r.url, r.headers["Location"]), allow_redirects=False, timeout=30)
        assert r.status_code == 200, f"{r.status_code} {r.headers.get('Location')} {r.text[:300]}"
        return r, parse_page(r.text)

    def press(self, provider_id: str, client: Client, **extra) -> requests.Response:
        """Presses "Continue with …" on the hosted login page; returns the 303 to the upstream."""
        response, page = self.login_page(client, **extra)
        form = page.form(action=f"/login/federated/{provider_id}")
        assert form is not None, f"no button for {provider_id} on the login page: {[f.action for f in page.forms]}"
        assert form.method == "post"
        r = self.http.post(urljoin(response.url, form.action), data=form.fields, allow_redirects=False, timeout=30)
        assert r.status_code in (302, 303), f"{r.status_code} {r.text[:300]}"
        location = r.headers["Location"]
        self.upstream_request = {k: v[-1] for k, v in parse_qs(urlsplit(location).query, keep_blank_values=True).items()}
        return r

    # through Apple

    def apple_continue(self, account: AppleAccount, location: str) -> tuple[str, dict[str, str]]:
        """The user continues on Apple's page as `account`; returns the form Apple posts back."""
        self.fed.apple.next_account = account.key
        r = self.http.get(location, allow_redirects=False, timeout=30)
        assert r.status_code == 200, f"Apple's page: {r.status_code} {r.text[:400]}"
        form = parse_page(r.text).form(action="/auth/authorize/continue")
        r = self.http.post(urljoin(r.url, form.action), data={**form.fields, "decision": "continue"}, timeout=30)
        posted = parse_page(r.text).form(id="apple-response")
        assert posted is not None, r.text[:400]
        return posted.action, posted.fields

    def cross_site_post(self, url: str, data: dict[str, str]) -> requests.Response:
        """A form POST from another site: only SameSite=None cookies go with it."""
        host = urlsplit(url).hostname
        jar = [c for c in self.http.cookies if c.domain.lstrip(".") in (host, host + ".local")
               and _same_site(c) == "none"]
        headers = {"Cookie": "; ".join(f"{c.name}={c.value}" for c in jar)} if jar else {}
        r = requests.post(url, data=data, headers={**self.http.headers, **headers}, allow_redirects=False, timeout=60)
        self.http.cookies.update(r.cookies)
        return r

    def via_apple(self, client: Client, account: AppleAccount, consent: str | None = "allow", **extra) -> Outcome:
        r = self.press("apple", client, **extra)
        action, fields = self.apple_continue(account, r.headers["Location"])
        assert action == self.fed.apple_callback, action
        self.apple_post = fields
        return self.land(self.cross_site_post(action, fields), consent)

    # through Corp ID

    def via_corp(self, client: Client, user: User, consent: str | None = "allow", **extra) -> Outcome:
        r = self.press("corp", client, **extra)
        return self.corp_continue(r.headers["Location"], user, consent)

    def corp_continue(self, location: str, user: User, consent: str | None = "allow") -> Outcome:
        corp = self.fed.corp.issuer
        r = self.http.get(location, allow_redirects=False, timeout=30)
        for _ in range(10):
            if r.status_code in (301, 302, 303):
                target = urljoin(r.url, r.headers["Location"])
                if not target.startswith(corp + "/"):
                    return self.land(self.http.get(target, allow_redirects=False, timeout=60), consent)
                r = self.http.get(target, allow_redirects=False, timeout=30)
                continue
            page = parse_page(r.text)
            login, grant = page.form(action="/login"), page.form(action="/consent")
            if login is not None:
                r = self.http.post(urljoin(r.url, login.action),
                                   data={**login.fields, "email": user.email, "password": user.password},
                                   allow_redirects=False, timeout=60)
            elif grant is not None:
                r = self.http.post(urljoin(r.url, grant.action), data={**grant.fields, "decision": "allow"},
                                   allow_redirects=False, timeout=30)
            else:
                raise AssertionError(f"stuck at Corp ID: {r.status_code} {page.title} {page.text[:300]}")
        raise AssertionError("too many steps at Corp ID")

    # back at the downstream

    def land(self, r: requests.Response, consent: str | None = "allow") -> Outcome:
        down = self.fed.down.issuer
        seen: list[str] = []
        for _ in range(10):
            if r.status_code in (301, 302, 303, 307):
                target = urljoin(r.url, r.headers["Location"])
                if target.startswith(down + "/"):
                    r = self.http.get(target, allow_redirects=False, timeout=30)
                    continue
                params = {k: v[-1] for k, v in parse_qs(urlsplit(target).query, keep_blank_values=True).items()}
                return Outcome("redirect", r, None, params, target, seen)
            if "html" not in r.headers.get("Content-Type", ""):
                return Outcome("other", r, seen=seen)
            refresh = re.search(r'<meta http-equiv="refresh" content="0;url=([^"]+)">', r.text)
            if refresh:
                # Tessera's "continue" page after an upstream login: a redirect made as a page
                # (the upstream's CSP form-action would apply to a real redirect).
                target = html.unescape(refresh.group(1))
                if target.startswith(down + "/"):
                    r = self.http.get(target, allow_redirects=False, timeout=30)
                    continue
                params = {k: v[-1] for k, v in parse_qs(urlsplit(target).query, keep_blank_values=True).items()}
                return Outcome("redirect", r, None, params, target, seen)
            page = parse_page(r.text)
            if page.form(action="/federation/link") is not None:
                return Outcome("link", r, page, seen=seen)
            grant = page.form(action="/consent")
            if grant is not None:
                if consent is None or "consent" in seen:
                    return Outcome("consent", r, page, seen=seen)
                seen.append("consent")
                r = self.http.post(urljoin(r.url, grant.action), data={**grant.fields, "decision": consent},
                                   allow_redirects=False, timeout=30)
                continue
            if page.form(action="/login") is not None:
                return Outcome("login", r, page, seen=seen)
            return Outcome("page", r, page, seen=seen)
        raise AssertionError("too many steps back at Tessera")

    def link(self, outcome: Outcome, password: str, consent: str | None = "allow") -> Outcome:
        form = outcome.page.form(action="/federation/link")
        r = self.http.post(urljoin(outcome.response.url, form.action), data={**form.fields, "password": password},
                           allow_redirects=False, timeout=60)
        return self.land(r, consent)

    def redeem(self, client: Client, outcome: Outcome) -> dict:
        assert outcome.kind == "redirect" and outcome.code, outcome.describe()
        assert outcome.params.get("state") == self.sent["state"], outcome.params
        assert outcome.params.get("iss") == self.fed.down.issuer, outcome.params
        body = assert_tokens(self.fed.op.redeem_code(client, outcome.code, self.verifier))
        claims = self.fed.op.verify_id_token(body["id_token"], client, nonce=self.sent["nonce"],
                                             access_token=body["access_token"])
        body["_claims"] = claims
        return body

    def account_page(self) -> tuple[requests.Response, Page]:
        r = self.http.get(self.fed.down.issuer + "/account", allow_redirects=False, timeout=30)
        return r, parse_page(r.text)

    def account_post(self, action: str, **fields) -> requests.Response:
        r, page = self.account_page()
        form = next((f for f in page.forms if f.action == action
                     and all(f.fields.get(k) == v for k, v in fields.items() if k not in ("confirm",))), None)
        assert form is not None, f"no form {action} {fields} on /account: {[(f.action, f.fields) for f in page.forms]}"
        return self.http.post(urljoin(r.url, action), data={**form.fields, **fields}, allow_redirects=False, timeout=60)


def userinfo(fed: Federation, access_token: str) -> dict:
    r = fed.op.userinfo(access_token)
    assert r.status_code == 200, r.text
    return r.json()


def new_apple_account(fed: Federation, name: str, email: str | None = None, **kw) -> AppleAccount:
    return fed.apple.add_account(name + "-" + uuid.uuid4().hex[:6], email or unique_email(name), **kw)


def last_token_request(fed: Federation, client_id: str) -> dict:
    records = [r for r in fed.apple.token_requests if r["form"].get("client_id") == client_id]
    assert records, f"Tessera never called Apple's token endpoint for {client_id}"
    return records[-1]


def assert_apple_client_secret(fed: Federation, record: dict, client_id: str) -> None:
    """What Apple checks, stated here once more for the report: ES256, kid, iss, sub, aud, ≤ 6 months."""
    assert record.get("client_secret_check") == "ok", f"Apple refused the client secret: {record.get('client_secret_check')}"
    header, claims = decode_unverified(record["form"]["client_secret"])
    assert header["alg"] == "ES256" and header["kid"] == KEY_ID, header
    assert claims["iss"] == TEAM_ID and claims["sub"] == client_id and claims["aud"] == APPLE_AUDIENCE, claims
    assert 0 < claims["exp"] - claims["iat"] <= 15777000, claims


# ---------------------------------------------------------------------------
# The login page and the requests sent upstream


def test_login_page_has_a_button_per_provider(fed):
    for language, apple_label, corp_label in (("en", "Continue with Apple", "Continue with Corp ID"),
                                              ("ru", "Продолжить с Apple", "Продолжить с Corp ID")):
        _, page = Visitor(fed, accept_language=language).login_page(fed.clients["web"])
        for provider, label in (("apple", apple_label), ("corp", corp_label)):
            form = page.form(action=f"/login/federated/{provider}")
            assert form is not None, f"{language}: no form for {provider}: {[f.action for f in page.forms]}"
            assert form.method == "post" and form.fields.get("interaction") and form.fields.get("csrf_token"), form
            assert any(text == label for _, _, text in form.buttons), f"{language}: {form.buttons}"


def test_apple_request_uses_form_post_with_state_and_nonce(fed):
    visitor = Visitor(fed)
    r = visitor.press("apple", fed.clients["web"])
    location = r.headers["Location"]
    assert location.startswith(fed.apple.endpoints["authorization_endpoint"] + "?"), location
    sent = visitor.upstream_request
    assert sent["client_id"] == APPLE_WEB and sent["redirect_uri"] == fed.apple_callback, sent
    assert set(sent["response_type"].split()) in ({"code"}, {"code", "id_token"}), sent
    assert sent["response_mode"] == "form_post" and set(sent["scope"].split()) == {"name", "email"}, sent
    assert len(sent.get("state", "")) >= 16 and len(sent.get("nonce", "")) >= 16, sent
    # a second press makes a new state and nonce
    other = Visitor(fed)
    other.press("apple", fed.clients["web"])
    assert other.upstream_request["state"] != sent["state"] and other.upstream_request["nonce"] != sent["nonce"]


def test_corp_request_uses_discovery_state_nonce_and_pkce(fed):
    visitor = Visitor(fed)
    r = visitor.press("corp", fed.clients["web"])
    assert r.headers["Location"].startswith(fed.corp_op.endpoint("authorization_endpoint") + "?"), r.headers["Location"]
    sent = visitor.upstream_request
    assert sent["client_id"] == fed.corp_client.client_id and sent["redirect_uri"] == fed.corp_callback, sent
    assert sent["response_type"] == "code" and "openid" in sent["scope"].split(), sent
    assert sent.get("state") and sent.get("nonce"), sent
    assert sent.get("code_challenge_method") == "S256" and len(sent.get("code_challenge", "")) == 43, sent


# ---------------------------------------------------------------------------
# Sign in with Apple on the web


def test_apple_first_sign_in_creates_an_account_with_the_name_apple_sent_once(fed):
    account = new_apple_account(fed, "ada", given_name="Ada", family_name="Lovelace")
    visitor = Visitor(fed)
    outcome = visitor.via_apple(fed.clients["web"], account)
    assert json.loads(visitor.apple_post["user"])["name"]["firstName"] == "Ada", "the stand-in sent the user JSON"
    assert outcome.seen == ["consent"], f"a third-party client asks for consent: {outcome.describe()}"
    body = visitor.redeem(fed.clients["web"], outcome)
    record = last_token_request(fed, APPLE_WEB)
    assert_apple_client_secret(fed, record, APPLE_WEB)
    assert record["form"].get("redirect_uri") == fed.apple_callback and record["status"] == 200, record
    info = userinfo(fed, body["access_token"])
    assert info["sub"] == body["_claims"]["sub"]
    assert (info.get("given_name"), info.get("family_name")) == ("Ada", "Lovelace"), info
    assert info.get("name") == "Ada Lovelace", info
    assert info.get("email") == account.email and info.get("email_verified") is True, info

    # The second time Apple sends no name: the account keeps the one it stored.
    again = Visitor(fed)
    outcome = again.via_apple(fed.clients["web"], account)
    assert "user" not in again.apple_post
    body2 = again.redeem(fed.clients["web"], outcome)
    assert body2["_claims"]["sub"] == body["_claims"]["sub"], "the same Apple ID lands in the same account"
    info = userinfo(fed, body2["access_token"])
    assert (info.get("given_name"), info.get("family_name")) == ("Ada", "Lovelace"), info


def test_apple_first_party_client_goes_straight_back_and_private_relay_email_is_kept(fed):
    relay = f"{uuid.uuid4().hex[:10]}@privaterelay.appleid.com"
    account = new_apple_account(fed, "relay", email=relay, given_name="Priv", family_name="Ate", is_private_email=True)
    visitor = Visitor(fed)
    outcome = visitor.via_apple(fed.clients["first"], account)
    assert outcome.seen == [], outcome.describe()
    body = visitor.redeem(fed.clients["first"], outcome)
    info = userinfo(fed, body["access_token"])
    assert info.get("email") == relay, info


def test_apple_unverified_email_is_not_marked_verified(fed):
    account = new_apple_account(fed, "unverified", email_verified=False)
    visitor = Visitor(fed)
    body = visitor.redeem(fed.clients["first"], visitor.via_apple(fed.clients["first"], account))
    info = userinfo(fed, body["access_token"])
    assert info.get("email_verified") is not True, info


def test_apple_email_verified_as_a_string_is_understood(fed):
    fed.apple.email_verified_style = "string"
    try:
        account = new_apple_account(fed, "stringy")
        visitor = Visitor(fed)
        body = visitor.redeem(fed.clients["first"], visitor.via_apple(fed.clients["first"], account))
        assert decode_unverified(last_token_request(fed, APPLE_WEB)["answer"]["id_token"])[1]["email_verified"] == "true"
    finally:
        fed.apple.email_verified_style = True
    info = userinfo(fed, body["access_token"])
    assert info.get("email_verified") is True, info


@pytest.mark.parametrize("tamper", ["nonce", "aud", "iss", "expired", "signature", "unknown kid"])
def test_apple_web_callback_refuses_a_tampered_id_token(fed, tamper):
    """Apple's token endpoint answers an ID token that is not for this request: no code for the client."""
    account = new_apple_account(fed, "tamper")
    apple = fed.apple
    if tamper == "signature":
        apple.break_next_id_token_signature = True
    else:
        apple.tamper_next_id_token = {
            "nonce": {"extra": {"nonce": "not-the-nonce"}},
            "aud": {"audience": "com.example.other"},
            "iss": {"issuer": "https://evil.example.com"},
            "expired": {"iat": int(time.time()) - 7200, "lifetime": 600},
            "unknown kid": {"key": RSAKey.generate_key(2048), "kid": "never-published"},
        }[tamper]
    try:
        visitor = Visitor(fed)
        outcome = visitor.via_apple(fed.clients["first"], account)
    finally:
        apple.tamper_next_id_token, apple.break_next_id_token_signature = None, False
    assert last_token_request(fed, APPLE_WEB).get("tampered"), f"Tessera did not redeem the code: {outcome.describe()}"
    assert not outcome.code, f"a {tamper} ID token was accepted: {outcome.describe()}"
    assert outcome.response.status_code < 500, outcome.describe()


def test_apple_callback_with_a_forged_or_replayed_state_gives_no_code(fed):
    account = new_apple_account(fed, "replay")
    visitor = Visitor(fed)
    r = visitor.press("apple", fed.clients["first"])
    action, fields = visitor.apple_continue(account, r.headers["Location"])
    forged = visitor.land(visitor.cross_site_post(action, {**fields, "state": random_token(24)}))
    assert not forged.code and forged.response.status_code < 500, forged.describe()
    # the genuine answer still works once (the forged one did not use up the flow) ...
    first = visitor.land(visitor.cross_site_post(action, fields))
    if first.code is None:
        # a server may end the flow after a forged state; then a new one must work
        visitor = Visitor(fed)
        first = visitor.via_apple(fed.clients["first"], account)
        action, fields = fed.apple_callback, visitor.apple_post
    assert first.code, first.describe()
    # ... and never twice
    replay = visitor.land(visitor.cross_site_post(action, fields))
    assert not replay.code, f"a replayed Apple callback gave a second code: {replay.describe()}"


def test_apple_callback_from_another_browser_does_not_sign_it_in(fed):
    """Login CSRF: Apple's answer to Alice's request, posted from Mallory's browser."""
    account = new_apple_account(fed, "csrf")
    alice = Visitor(fed)
    r = alice.press("apple", fed.clients["first"])
    action, fields = alice.apple_continue(account, r.headers["Location"])
    mallory = Visitor(fed)
    mallory.login_page(fed.clients["first"])
    outcome = mallory.land(mallory.cross_site_post(action, fields))
    assert outcome.response.status_code < 500, outcome.describe()
    # Posted without any cookie of the flow, like Apple's cross-site POST: Tessera may
    # finish it only by redirecting with a code bound to Alice's request (PKCE verifier
    # is Alice's), never by giving Mallory a session.
    r, page = mallory.account_page()
    assert page.form(action="/account/delete") is None and "/account/identities/remove" not in r.text, \
        "Mallory's browser got signed in with Alice's Apple answer"


# ---------------------------------------------------------------------------
# Another OpenID provider (a second Tessera)


def test_corp_first_sign_in_creates_an_account_and_the_second_returns_to_it(fed):
    user = fed.corp_users["newcomer"]
    visitor = Visitor(fed)
    body = visitor.redeem(fed.clients["web"], visitor.via_corp(fed.clients["web"], user))
    info = userinfo(fed, body["access_token"])
    assert info["email"] == user.email, info
    assert info.get("name") == "Nora Newcomer", f"the name Corp ID gave is kept: {info}"
    again = Visitor(fed)
    body2 = again.redeem(fed.clients["web"], again.via_corp(fed.clients["web"], user))
    assert body2["_claims"]["sub"] == body["_claims"]["sub"], "the same Corp ID user lands in the same account"


def test_corp_email_verified_follows_the_upstream(fed):
    """The downstream marks the email verified exactly when Corp ID's ID token says so."""
    user = fed.corp_users["newcomer"]
    client = fed.corp_client
    # Corp ID's own answer for this user (the downstream client is registered there; its
    # redirect URI is the downstream callback, which we only read the code from).
    agent = UserAgent(fed.corp_op)
    result = agent.authorize(client, user=user, scope="openid email profile")
    assert result.kind == "redirect" and result.code, result.describe()
    upstream = assert_tokens(fed.corp_op.redeem(client, result))
    upstream_verified = jwt.decode(upstream["id_token"], KeySet.import_key_set(fed.corp_op.jwks())).claims.get(
        "email_verified")
    visitor = Visitor(fed)
    body = visitor.redeem(fed.clients["first"], visitor.via_corp(fed.clients["first"], user))
    assert bool(userinfo(fed, body["access_token"]).get("email_verified")) == bool(upstream_verified)


# ---------------------------------------------------------------------------
# Linking: never by email alone


def test_apple_email_of_an_existing_account_asks_for_its_password(fed):
    dora = fed.users["dora"]
    account = new_apple_account(fed, "dora", email=dora.email, given_name="Dora", family_name="Apple")
    visitor = Visitor(fed)
    outcome = visitor.via_apple(fed.clients["first"], account)
    assert outcome.kind == "link" and outcome.response.status_code == 200, outcome.describe()
    form = outcome.page.form(action="/federation/link")
    assert form.fields.get("link_token") and form.fields.get("csrf_token") and "password" in form.fields, form
    assert "Connect your account" in outcome.page.title or "Connect your account" in outcome.page.text, outcome.page.title

    wrong = visitor.link(outcome, "not the password")
    assert wrong.response.status_code == 401 and not wrong.code, wrong.describe()
    # not linked: Apple again still asks
    retry = Visitor(fed)
    outcome = retry.via_apple(fed.clients["first"], account)
    assert outcome.kind == "link", f"a wrong password linked the identity: {outcome.describe()}"

    linked = retry.link(outcome, dora.password)
    body = retry.redeem(fed.clients["first"], linked)
    assert body["_claims"]["sub"] == dora.id, "linked to Dora's account"
    # From now on Apple signs Dora straight in.
    later = Visitor(fed)
    body = later.redeem(fed.clients["first"], later.via_apple(fed.clients["first"], account))
    assert body["_claims"]["sub"] == dora.id


def test_corp_email_of_an_existing_account_asks_for_its_password(fed):
    erin_down, erin_up = fed.users["erin"], fed.corp_users["erin"]
    assert erin_down.email == erin_up.email
    visitor = Visitor(fed)
    outcome = visitor.via_corp(fed.clients["first"], erin_up)
    assert outcome.kind == "link", f"an upstream email took over an existing account? {outcome.describe()}"
    wrong = visitor.link(outcome, "guess")
    assert wrong.response.status_code == 401 and not wrong.code, wrong.describe()
    visitor = Visitor(fed)
    outcome = visitor.via_corp(fed.clients["first"], erin_up)
    assert outcome.kind == "link", outcome.describe()
    body = visitor.redeem(fed.clients["first"], visitor.link(outcome, erin_down.password))
    assert body["_claims"]["sub"] == erin_down.id


def test_a_link_token_is_single_use_and_bound_to_its_page(fed):
    gina = fed.users["gina"]
    account = new_apple_account(fed, "gina", email=gina.email)
    visitor = Visitor(fed)
    outcome = visitor.via_apple(fed.clients["first"], account)
    assert outcome.kind == "link", outcome.describe()
    form = outcome.page.form(action="/federation/link")
    # a forged link token is refused
    r = visitor.http.post(fed.down.issuer + "/federation/link",
                          data={**form.fields, "link_token": random_token(24), "password": gina.password},
                          allow_redirects=False, timeout=30)
    assert r.status_code in (400, 401, 403) and "code=" not in r.headers.get("Location", ""), r.status_code
    # without the page's CSRF token it is refused
    r = requests.post(fed.down.issuer + "/federation/link", data={"link_token": form.fields["link_token"],
                                                                  "password": gina.password},
                      allow_redirects=False, timeout=30)
    assert r.status_code in (400, 401, 403) and "code=" not in r.headers.get("Location", ""), r.status_code
    done = visitor.link(outcome, gina.password)
    assert done.code, done.describe()
    r = visitor.http.post(fed.down.issuer + "/federation/link", data={**form.fields, "password": gina.password},
                          allow_redirects=False, timeout=30)
    assert "code=" not in r.headers.get("Location", ""), "a link token worked twice"


# ---------------------------------------------------------------------------
# The account page: identities, deletion


def test_account_page_lists_identities_and_keeps_the_last_way_to_sign_in(fed):
    account = new_apple_account(fed, "only-apple", given_name="Olive", family_name="Only")
    visitor = Visitor(fed)
    sub = visitor.redeem(fed.clients["first"], visitor.via_apple(fed.clients["first"], account))["_claims"]["sub"]
    r, page = visitor.account_page()
    assert r.status_code == 200 and page.form(action="/account/identities/remove") is not None, page.text[:500]
    assert "Apple" in page.text
    refused = visitor.account_post("/account/identities/remove", provider="apple")
    assert refused.status_code < 500, refused.status_code
    _, page = visitor.account_page()
    assert page.form(action="/account/identities/remove") is not None, "the last way to sign in was removed"
    again = Visitor(fed)
    body = again.redeem(fed.clients["first"], again.via_apple(fed.clients["first"], account))
    assert body["_claims"]["sub"] == sub, "Apple no longer leads to the account"


def test_removing_a_linked_identity_unlinks_it(fed):
    dora_like = fed.users["hugo"]  # has a password, so Apple is not the last way to sign in
    account = new_apple_account(fed, "hugo-link", email=dora_like.email)
    visitor = Visitor(fed)
    outcome = visitor.via_apple(fed.clients["first"], account)
    assert outcome.kind == "link", outcome.describe()
    assert visitor.link(outcome, dora_like.password).code
    r, page = visitor.account_page()
    forms = [f for f in page.forms if f.action == "/account/identities/remove"]
    assert [f.fields.get("provider") for f in forms] == ["apple"], [f.fields for f in forms]
    r = visitor.account_post("/account/identities/remove", provider="apple")
    assert r.status_code in (200, 302, 303), r.status_code
    _, page = visitor.account_page()
    assert page.form(action="/account/identities/remove") is None, "still listed after removal"
    outcome = Visitor(fed).via_apple(fed.clients["first"], account)
    assert outcome.kind == "link", f"the removed identity still signs in: {outcome.describe()}"


def test_connecting_apple_from_the_account_page(fed):
    """docs/federation.md: the signed-in user is the proof; an identity of another account is refused."""
    ivy = _user(fed.down_cli, unique_email("ivy"), "Ivy Connect")
    account = new_apple_account(fed, "ivy-apple", email=unique_email("ivy-relay"))  # another address
    visitor = Visitor(fed)
    r, page = visitor.account_page()
    login = page.form(action="/account/login")
    assert login is not None, page.text[:300]
    r = visitor.http.post(fed.down.issuer + "/account/login",
                          data={**login.fields, "email": ivy.email, "password": ivy.password}, allow_redirects=True,
                          timeout=60)
    r, page = visitor.account_page()
    connect = page.form(action="/account/identities/connect/apple")
    assert connect is not None, [f.action for f in page.forms]
    r = visitor.http.post(fed.down.issuer + connect.action, data=connect.fields, allow_redirects=False, timeout=30)
    assert r.status_code in (302, 303) and r.headers["Location"].startswith(fed.apple.endpoints["authorization_endpoint"])
    action, fields = visitor.apple_continue(account, r.headers["Location"])
    visitor.land(visitor.cross_site_post(action, fields))
    _, page = visitor.account_page()
    assert [f.fields.get("provider") for f in page.forms if f.action == "/account/identities/remove"] == ["apple"]
    other = Visitor(fed)
    body = other.redeem(fed.clients["first"], other.via_apple(fed.clients["first"], account))
    assert body["_claims"]["sub"] == ivy.id

    # The same Apple ID can't be connected to a second account.
    jack = _user(fed.down_cli, unique_email("jack"), "Jack Other")
    thief = Visitor(fed)
    _, page = thief.account_page()
    thief.http.post(fed.down.issuer + "/account/login",
                    data={**page.form(action="/account/login").fields, "email": jack.email, "password": jack.password},
                    timeout=60)
    _, page = thief.account_page()
    connect = page.form(action="/account/identities/connect/apple")
    r = thief.http.post(fed.down.issuer + connect.action, data=connect.fields, allow_redirects=False, timeout=30)
    action, fields = thief.apple_continue(account, r.headers["Location"])
    thief.land(thief.cross_site_post(action, fields))
    _, page = thief.account_page()
    assert page.form(action="/account/identities/remove") is None, "an Apple ID of another account was connected"
    again = Visitor(fed)
    assert again.redeem(fed.clients["first"], again.via_apple(fed.clients["first"], account))["_claims"]["sub"] == ivy.id


def test_deleting_the_account_revokes_apples_token(fed):
    account = new_apple_account(fed, "leaver", given_name="Lee", family_name="Ver")
    visitor = Visitor(fed)
    body = visitor.redeem(fed.clients["first"], visitor.via_apple(fed.clients["first"], account))
    apple_refresh = fed.apple.refresh_tokens_of(account, APPLE_WEB)
    assert apple_refresh, "Tessera did not keep Apple's refresh token"
    r = visitor.account_post("/account/delete", confirm="delete")
    assert r.status_code < 500 and fed.op.userinfo(body["access_token"]).status_code == 200, \
        f"deleted without the confirmation: {r.status_code}"
    assert not set(apple_refresh) & fed.apple.revoked_refresh_tokens(), "revoked without the confirmation"
    r = visitor.account_post("/account/delete", confirm="DELETE")
    assert r.status_code in (200, 302, 303), (r.status_code, r.text[:300])
    deadline = time.monotonic() + 15
    while not set(apple_refresh) & fed.apple.revoked_refresh_tokens() and time.monotonic() < deadline:
        time.sleep(0.3)
    records = [x for x in fed.apple.revocations if x["token"] in apple_refresh]
    assert records, f"no revocation at Apple; it got {[(x['token'], x.get('client_secret_check')) for x in fed.apple.revocations]}"
    record = records[-1]
    assert record["status"] == 200 and record["client_secret_valid"], record.get("client_secret_check")
    assert record["client_id"] == APPLE_WEB and record["token_type_hint"] in (None, "refresh_token"), record
    # the account is gone: its tokens stop working and Apple no longer signs into it
    assert fed.op.refresh(fed.clients["first"], body["refresh_token"]).status_code == 400
    assert fed.op.userinfo(body["access_token"]).status_code == 401
    fresh = Visitor(fed)
    body2 = fresh.redeem(fed.clients["first"], fresh.via_apple(fed.clients["first"], account))
    assert body2["_claims"]["sub"] != body["_claims"]["sub"]


# ---------------------------------------------------------------------------
# Native Sign in with Apple (token exchange)


def exchange(fed: Federation, given: dict, *, raw_nonce: str | None = None, identity_token: str | None = None,
             user: str | None = "given", scope: str = SCOPE, **extra) -> requests.Response:
    data = {"grant_type": TOKEN_EXCHANGE, "client_id": NATIVE_CLIENT,
            "subject_token": identity_token or given["identity_token"], "subject_token_type": ID_TOKEN_TYPE,
            "upstream_provider": "apple", "authorization_code": given["authorization_code"],
            "nonce": raw_nonce or given["raw_nonce"], "scope": scope, **extra}
    if user == "given":
        user = given.get("user")
    if user:
        data["user"] = user
    return fed.op.http.post(fed.op.endpoint("token_endpoint"), data=data, timeout=60)


def test_native_sign_in_creates_then_finds_the_account(fed):
    account = new_apple_account(fed, "native", given_name="Nat", family_name="Ive")
    given = fed.apple.native_authorization(APPLE_APP, account, random_token(16))
    assert given["user"], "the first authorization carries name and email"
    body = assert_tokens(exchange(fed, given))
    assert body.get("is_new_user") is True, body
    assert body.get("issued_token_type") == "urn:ietf:params:oauth:token-type:access_token", body
    client = fed.clients["ios"]
    claims = fed.op.verify_id_token(body["id_token"], client, access_token=body["access_token"])
    info = userinfo(fed, body["access_token"])
    assert (info.get("given_name"), info.get("family_name"), info.get("email")) == ("Nat", "Ive", account.email), info
    record = last_token_request(fed, APPLE_APP)
    assert_apple_client_secret(fed, record, APPLE_APP)
    assert record["status"] == 200 and not record["form"].get("redirect_uri"), record
    assert body.get("refresh_token") and assert_tokens(fed.op.refresh(client, body["refresh_token"]))

    again = fed.apple.native_authorization(APPLE_APP, account, random_token(16))
    assert again["user"] is None
    body2 = assert_tokens(exchange(fed, again))
    assert body2.get("is_new_user") is False, body2
    assert fed.op.verify_id_token(body2["id_token"], client)["sub"] == claims["sub"]


def test_native_exchange_needs_the_nonce_and_accepts_it_once(fed):
    account = new_apple_account(fed, "native-nonce")
    given = fed.apple.native_authorization(APPLE_APP, account, random_token(16))
    # Without the raw nonce an identity token taken from a device could be exchanged by anyone.
    data = {"grant_type": TOKEN_EXCHANGE, "client_id": NATIVE_CLIENT, "subject_token": given["identity_token"],
            "subject_token_type": ID_TOKEN_TYPE, "upstream_provider": "apple", "scope": SCOPE}
    missing = fed.op.http.post(fed.op.endpoint("token_endpoint"), data=data, timeout=60)
    assert_oauth_error(missing, "invalid_request")
    assert "nonce" in missing.json()["error_description"]
    assert_tokens(exchange(fed, given))
    # The same identity token and nonce, replayed, are refused.
    assert_oauth_error(exchange(fed, given, user=None), "invalid_grant")


@pytest.mark.parametrize("tamper", ["wrong nonce", "wrong aud", "expired", "unknown kid", "bad signature",
                                    "wrong issuer", "code of another user"])
def test_native_tampered_identity_token_is_refused(fed, tamper):
    apple = fed.apple
    account = new_apple_account(fed, "native-tamper")
    raw = random_token(16)
    given = apple.native_authorization(APPLE_APP, account, raw)
    token, raw_nonce = None, None
    if tamper == "wrong nonce":
        raw_nonce = random_token(16)
    elif tamper == "wrong aud":
        token = apple.identity_token(account, "com.evil.app", nonce=nonce_hash(raw))
    elif tamper == "expired":
        token = apple.identity_token(account, APPLE_APP, nonce=nonce_hash(raw), iat=int(time.time()) - 7200, lifetime=600)
    elif tamper == "unknown kid":
        token = apple.identity_token(account, APPLE_APP, nonce=nonce_hash(raw), key=RSAKey.generate_key(2048),
                                     kid="never-published")
    elif tamper == "bad signature":
        token = flip_signature(given["identity_token"])
    elif tamper == "wrong issuer":
        token = apple.identity_token(account, APPLE_APP, nonce=nonce_hash(raw), issuer="https://appleid.evil.com")
    elif tamper == "code of another user":
        # a genuine identity token of someone else, with this user's code: the code's token must agree
        other = new_apple_account(fed, "native-victim")
        token = apple.identity_token(other, APPLE_APP, nonce=nonce_hash(raw))
    assert_oauth_error(exchange(fed, given, raw_nonce=raw_nonce, identity_token=token), "invalid_grant")


def test_native_identity_token_signed_with_a_new_apple_key_is_accepted(fed):
    """Tessera refetches Apple's JWKS when it sees an unknown kid."""
    apple = fed.apple
    warm = apple.native_authorization(APPLE_APP, new_apple_account(fed, "warm"), random_token(16))
    assert_tokens(exchange(fed, warm))  # Tessera has Apple's keys cached now
    apple.rotate_key(keep_old=False)
    given = apple.native_authorization(APPLE_APP, new_apple_account(fed, "rotated"), random_token(16))
    assert_tokens(exchange(fed, given))


def test_native_email_of_an_existing_account_needs_a_link_token(fed):
    frank = fed.users["frank"]
    account = new_apple_account(fed, "frank", email=frank.email)
    given = fed.apple.native_authorization(APPLE_APP, account, random_token(16))
    body = assert_oauth_error(exchange(fed, given), "account_exists")
    # Frank signs in to the app with his password, then proves it with that access token.
    agent = UserAgent(fed.op)
    tokens = agent.tokens(fed.clients["ios"], frank, scope="openid profile email")
    given = fed.apple.native_authorization(APPLE_APP, account, random_token(16))
    wrong = exchange(fed, given, link_token=random_token(24))
    assert wrong.status_code == 400 and wrong.json().get("error") in ("account_exists", "invalid_grant", "invalid_request")
    given = fed.apple.native_authorization(APPLE_APP, account, random_token(16))
    linked = assert_tokens(exchange(fed, given, link_token=tokens["access_token"]))
    assert fed.op.verify_id_token(linked["id_token"], fed.clients["ios"])["sub"] == frank.id
    assert linked.get("is_new_user") is False
    given = fed.apple.native_authorization(APPLE_APP, account, random_token(16))
    later = assert_tokens(exchange(fed, given))
    assert fed.op.verify_id_token(later["id_token"], fed.clients["ios"])["sub"] == frank.id
    del body


# ---------------------------------------------------------------------------
# Apple's server-to-server notifications


def notifications_url(fed: Federation) -> str:
    return fed.down.issuer + "/federation/apple/notifications"


def native_user(fed: Federation, name: str) -> tuple[AppleAccount, dict]:
    account = new_apple_account(fed, name)
    tokens = assert_tokens(exchange(fed, fed.apple.native_authorization(APPLE_APP, account, random_token(16))))
    return account, tokens


def test_notification_with_a_bad_signature_is_refused(fed):
    account, tokens = native_user(fed, "notified-bad")
    apple = fed.apple
    for payload in (flip_signature(apple.notification_payload(APPLE_WEB, "consent-revoked", account)),
                    apple.notification_payload(APPLE_WEB, "consent-revoked", account, key=RSAKey.generate_key(2048),
                                               kid="never-published"),
                    apple.notification_payload(APPLE_WEB, "consent-revoked", account, issuer="https://evil.example.com")):
        r = apple.notify(notifications_url(fed), payload)
        assert r.status_code == 400, (r.status_code, r.text[:200])
    assert fed.op.refresh(fed.clients["ios"], tokens["refresh_token"]).status_code == 200, \
        "a forged notification ended the user's tokens"


def test_consent_revoked_ends_the_users_refresh_tokens(fed):
    account, tokens = native_user(fed, "notified-revoked")
    r = fed.apple.notify(notifications_url(fed), fed.apple.notification_payload(APPLE_WEB, "consent-revoked", account))
    assert r.status_code == 200, r.text[:200]
    assert_oauth_error(fed.op.refresh(fed.clients["ios"], tokens["refresh_token"]), "invalid_grant")


def test_account_delete_removes_the_identity(fed):
    account, tokens = native_user(fed, "notified-deleted")
    sub = fed.op.verify_id_token(tokens["id_token"], fed.clients["ios"])["sub"]
    r = fed.apple.notify(notifications_url(fed), fed.apple.notification_payload(APPLE_WEB, "account-delete", account))
    assert r.status_code == 200, r.text[:200]
    # unlinked, and the account's tokens ended (docs/federation.md)
    assert_oauth_error(fed.op.refresh(fed.clients["ios"], tokens["refresh_token"]), "invalid_grant")
    # The account still has the Apple ID's address, so Apple no longer signs into it by itself.
    again = exchange(fed, fed.apple.native_authorization(APPLE_APP, account, random_token(16)))
    if again.status_code == 200:
        assert fed.op.verify_id_token(again.json()["id_token"], fed.clients["ios"])["sub"] != sub, \
            "the identity still leads to the old account"
    else:
        assert_oauth_error(again, "account_exists")


def test_a_stale_or_replayed_notification_is_refused(fed):
    account, tokens = native_user(fed, "notified-replayed")
    apple = fed.apple
    # An attacker who captured an old notification plays it back.
    stale = apple.notification_payload(APPLE_WEB, "consent-revoked", account, now=int(time.time()) - 3600)
    r = apple.notify(notifications_url(fed), stale)
    assert r.status_code == 400 and "too old" in r.json()["error_description"], (r.status_code, r.text[:200])
    assert fed.op.refresh(fed.clients["ios"], tokens["refresh_token"]).status_code == 200, "a stale notification was applied"
    # A fresh one is applied once; the same one again is refused.
    payload = apple.notification_payload(APPLE_WEB, "email-disabled", account)
    assert apple.notify(notifications_url(fed), payload).status_code == 200
    again = apple.notify(notifications_url(fed), payload)
    assert again.status_code == 400 and "already applied" in again.json()["error_description"], (again.status_code, again.text)


def test_email_enabled_and_disabled_are_accepted(fed):
    account, _ = native_user(fed, "notified-email")
    for event in ("email-disabled", "email-enabled"):
        r = fed.apple.notify(notifications_url(fed), fed.apple.notification_payload(APPLE_WEB, event, account))
        assert r.status_code == 200, (event, r.status_code, r.text[:200])


# ---------------------------------------------------------------------------
# A real browser through each button


@pytest.fixture(scope="module")
def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,1000",
                     "--lang=en-US", "--disable-gpu", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    browser.set_page_load_timeout(60)
    yield browser
    browser.quit()


def _browser_flow(fed: Federation, client: Client) -> tuple[str, dict]:
    state, nonce, verifier = random_token(12), random_token(12), random_token(48)
    params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
              "scope": "openid profile email", "state": state, "nonce": nonce, "code_challenge": s256(verifier),
              "code_challenge_method": "S256"}
    return query_url(fed.op.endpoint("authorization_endpoint"), params), {"state": state, "nonce": nonce,
                                                                          "verifier": verifier}


def forget_cookies(fed: Federation, driver) -> None:
    """A new person at the browser: no session at either Tessera (cookies are per host)."""
    for base in (fed.down.issuer, fed.corp.issuer):
        driver.get(base + "/health")
        driver.delete_all_cookies()


def _wait(driver, predicate, what: str, timeout: float = 30):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, timeout).until(predicate)
    except TimeoutException:
        raise AssertionError(f"waiting for {what}: at {driver.current_url} ({driver.title!r}):\n{driver.page_source[:1500]}")


def test_browser_continue_with_apple(fed, driver, callback, artifacts):
    from selenium.webdriver.common.by import By
    account = new_apple_account(fed, "browser", given_name="Bro", family_name="Wser")
    fed.apple.next_account = account.key
    client = fed.clients["first"]
    url, flow = _browser_flow(fed, client)
    forget_cookies(fed, driver)
    driver.get(url)
    _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "form[action='/login/federated/apple'] button"), "the Apple button")
    driver.save_screenshot(str(artifacts / "federation-01-login-buttons.png"))
    button = driver.find_element(By.CSS_SELECTOR, "form[action='/login/federated/apple'] button")
    assert button.text == "Continue with Apple"
    button.click()
    _wait(driver, lambda d: d.title == "Sign in with Apple", "Apple's page")
    driver.save_screenshot(str(artifacts / "federation-02-apple.png"))
    driver.find_element(By.ID, "continue").click()  # Apple's page then posts the answer back with JavaScript
    record = callback.wait_for(lambda r: r.params.get("state") == flow["state"], 30)
    assert record is not None, f"no callback; the browser is at {driver.current_url} ({driver.title!r}): {driver.page_source[:800]}"
    driver.save_screenshot(str(artifacts / "federation-03-apple-callback.png"))
    assert record.params.get("code") and record.params.get("iss") == fed.down.issuer, record.params
    body = assert_tokens(fed.op.redeem_code(client, record.params["code"], flow["verifier"]))
    claims = fed.op.verify_id_token(body["id_token"], client, nonce=flow["nonce"])
    assert claims.get("email") in (None, account.email)


def test_browser_continue_with_corp(fed, driver, callback, artifacts):
    from selenium.webdriver.common.by import By
    user = fed.corp_users["browser"]
    client = fed.clients["first"]
    url, flow = _browser_flow(fed, client)
    forget_cookies(fed, driver)
    driver.get(url)
    _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "form[action='/login/federated/corp'] button"), "the Corp button")
    button = driver.find_element(By.CSS_SELECTOR, "form[action='/login/federated/corp'] button")
    assert button.text == "Continue with Corp ID"
    button.click()
    _wait(driver, lambda d: d.current_url.startswith(fed.corp.issuer) and d.find_elements(By.NAME, "password"),
          "Corp ID's login page")
    driver.save_screenshot(str(artifacts / "federation-04-corp-login.png"))
    driver.find_element(By.NAME, "email").send_keys(user.email)
    driver.find_element(By.NAME, "password").send_keys(user.password)
    driver.find_element(By.CSS_SELECTOR, "form[action='/login'] button[type=submit]").click()
    record = callback.wait_for(lambda r: r.params.get("state") == flow["state"], 30)
    assert record is not None, f"no callback; the browser is at {driver.current_url} ({driver.title!r}): {driver.page_source[:800]}"
    driver.save_screenshot(str(artifacts / "federation-05-corp-callback.png"))
    body = assert_tokens(fed.op.redeem_code(client, record.params["code"], flow["verifier"]))
    assert fed.op.verify_id_token(body["id_token"], client, nonce=flow["nonce"])["email"] == user.email
