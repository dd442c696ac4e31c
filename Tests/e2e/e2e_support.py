"""Helpers of the black-box end-to-end tests.

Everything here talks to Tessera from the outside: the `tessera` command line to
register clients and users, HTTP for the protocol (endpoints are discovered), an
independent JOSE library (joserfc, Authlib's) to verify what the server signs.
"""

from __future__ import annotations

import base64
import hashlib
import html.parser
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import requests
from joserfc import jwt
from joserfc.jwk import KeySet

ROOT = Path(__file__).resolve().parents[2]
# Screenshots and other files to look at: E2E_ARTIFACTS, when two suites run at once (Tests/e2e/run.sh).
ARTIFACTS = Path(os.environ.get("E2E_ARTIFACTS") or ROOT / "e2e-artifacts")
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
PASSWORD = "correct horse battery staple"
TOKEN_KEYS = ("access_token", "id_token", "refresh_token")
APPLE_TEAM_ID = "TEAM4E2E01"
# A secret with the characters RFC 6749 §2.3.1 says must be form-encoded in Basic credentials.
SPECIAL_SECRET = "s3cret+with/slash=equals:colon&amp%percent ~tilde-0123456789"  # the --assertion-issuer of the Sign-in-with-Apple style client


def tessera_binary() -> str:
    """The binary under test; waits a while if it is being rebuilt right now."""
    path = os.environ.get("TESSERA_BIN") or str(ROOT / "Server" / ".build" / "release" / "tessera")
    if not os.path.isabs(path):
        path = str(ROOT / path)
    deadline = time.monotonic() + 180
    while not os.access(path, os.X_OK):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no tessera binary at {path} (set TESSERA_BIN)")
        time.sleep(2)
    return path


# ---------------------------------------------------------------------------
# Databases: SQLite files, or PostgreSQL databases when the suite runs against PostgreSQL

# E2E_POSTGRES: a PostgreSQL server's URL (its maintenance database, e.g. .../postgres?sslmode=disable).
# When set, every database the suite asks for is a new database on that server, and every
# server and command shares one master key (nodes on one database need the same key).
POSTGRES = os.environ.get("E2E_POSTGRES")
if POSTGRES:
    os.environ.setdefault("TESSERA_MASTER_KEY", base64.b64encode(secrets.token_bytes(32)).decode())


def new_database(workdir: Path, name: str) -> Path | str:
    """A database for one server (and its CLI): `workdir/NAME.sqlite`, or with E2E_POSTGRES a
    PostgreSQL database named after NAME, created empty the first time this run asks for it."""
    if not POSTGRES:
        return workdir / f"{name}.sqlite"
    database = "e2e_" + "".join(c if c.isalnum() else "_" for c in name.lower())
    if database not in _created:
        # Left over from an earlier run on the same server (sealed with another master key): made anew.
        subprocess.run(["psql", POSTGRES, "-qc", f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'],
                       capture_output=True, text=True, check=True)
        subprocess.run(["psql", POSTGRES, "-qc", f'CREATE DATABASE "{database}"'], capture_output=True, text=True, check=True)
        _created.add(database)
    return urlsplit(POSTGRES)._replace(path="/" + database).geturl()


_created: set[str] = set()


def query_rows(database: Path | str, sql: str, params: tuple = ()) -> list[tuple]:
    """Rows of a query on a suite database (SQLite or PostgreSQL), `?` for parameters; values
    as SQLite gives them, or as text from PostgreSQL (NULL as None)."""
    if isinstance(database, Path):
        import sqlite3
        with sqlite3.connect(database) as db:
            return db.execute(sql, params).fetchall()
    for value in params:
        sql = sql.replace("?", "'" + str(value).replace("'", "''") + "'", 1)
    null = "\x02"
    out = subprocess.run(["psql", str(database), "-X", "-tA", "-F", "\x1f", "-R", "\x1e", "-P", f"null={null}", "-c", sql],
                         capture_output=True, text=True, check=True).stdout
    return [tuple(None if v == null else v for v in row.split("\x1f")) for row in out.rstrip("\n").split("\x1e") if row]


def database_size(database: Path | str) -> int:
    """Bytes a suite database takes: the SQLite file with its journal, or PostgreSQL's size of it."""
    if isinstance(database, Path):
        return sum(p.stat().st_size for p in database.parent.glob(database.name + "*"))
    return int(query_rows(database, "SELECT pg_database_size(current_database())")[0][0])


_handed_out: set[int] = set()
_handing_out = threading.Lock()


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A loopback port free now, below the kernel's ephemeral range, and never handed out before
    in this run. A port the kernel picks (bind to 0) comes from the range outgoing connections
    use: in the seconds before a server binds it, a connection (a node's to PostgreSQL, during an
    outage's reconnects) could take it, and the server would exit with `Address already in use`."""
    low = _ephemeral_low()
    with _handing_out:
        for _ in range(1000):
            port = secrets.randbelow(low - 10_000) + 10_000
            if port in _handed_out:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free loopback port between 10000 and {low}")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def s256(verifier: str) -> str:
    return b64url(hashlib.sha256(verifier.encode()).digest())


def half_hash(token: str) -> str:
    """at_hash for RS256/ES256 (OpenID Connect Core §3.1.3.6)."""
    return b64url(hashlib.sha256(token.encode()).digest()[:16])


def random_token(n: int = 24) -> str:
    return secrets.token_urlsafe(n)


def unverified_header(token: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))


def unverified_claims(token: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))


# ---------------------------------------------------------------------------
# The server and the command line


class TesseraServer:
    """`tessera serve` on a loopback port, stopped with stop()."""

    def __init__(self, binary: str, database: Path, workdir: Path, port: int | None = None,
                 env: dict[str, str] | None = None, name: str = "server", args: Iterable[str] = ()):
        self.binary = binary
        self.database = database
        self.workdir = workdir
        self.port = port or free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.env = env or {}
        self.name = name
        self.args = list(args)  # more `tessera serve` options, e.g. ["--smtp-url", "smtp://127.0.0.1:2525"]
        self.stderr_path = workdir / f"{name}-{self.port}.stderr.log"
        self.stdout_lines: list[str] = []
        self.process: subprocess.Popen | None = None
        self._ready = threading.Event()

    def start(self, timeout: float = 90, wait: bool = True) -> "TesseraServer":
        """Starts the process and waits until it says it is ready (wait=False: returns at once)."""
        env = dict(os.environ)
        env.update(self.env)
        self._stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--port", str(self.port), "--database", str(self.database), *self.args],
            cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr,
            text=True, bufsize=1)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        if not wait:
            return self
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._ready.wait(0.2):
                return self
            if self.process.poll() is not None:
                raise RuntimeError(f"tessera serve exited with {self.process.returncode}:\n{self.log()}")
            try:
                if requests.get(self.issuer + "/health", timeout=1).status_code == 200:
                    return self
            except requests.RequestException:
                pass
        self.stop()
        raise RuntimeError(f"tessera serve did not become ready in {timeout} s:\n{self.log()}")

    def _read_stdout(self) -> None:
        assert self.process and self.process.stdout
        for line in self.process.stdout:
            self.stdout_lines.append(line)
            if line.startswith("Tessera is ready"):
                self._ready.set()

    def log(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_size(self) -> int:
        try:
            return self.stderr_path.stat().st_size
        except OSError:
            return 0

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        if hasattr(self, "_stderr"):
            self._stderr.close()


class CLI:
    """The admin command line on the same database as the server."""

    def __init__(self, binary: str, database: Path, workdir: Path):
        self.binary = binary
        self.database = database
        self.workdir = workdir

    def run(self, *args: str, input: str | None = None) -> str:
        command = [self.binary, *args, "--database", str(self.database)]
        for attempt in range(3):
            done = subprocess.run(command, cwd=self.workdir, input=input, capture_output=True, text=True, timeout=180)
            if done.returncode == 0:
                return done.stdout
            busy = "locked" in done.stderr.lower() or "busy" in done.stderr.lower()
            if not busy or attempt == 2:
                raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}{done.stdout}")
            time.sleep(1)
        raise AssertionError("unreachable")

    def add_client(self, name: str, *, redirect_uris: Iterable[str] = (), post_logout_redirect_uris: Iterable[str] = (),
                   client_id: str | None = None, public: bool = False, secret: str | None = None,
                   scopes: Iterable[str] = (), grant_types: Iterable[str] = (), first_party: bool = False,
                   jwks_file: Path | None = None, assertion_issuer: str | None = None, assertion_lifetime: str | None = None,
                   pairwise: bool = False, resource_server: bool = False, authenticator: bool = False,
                   require_par: bool = False, device_sso_group: str | None = None,
                   ios_apps: Iterable[str] = (), android_apps: Iterable[str] = ()) -> dict:
        args = ["clients", "add", "--name", name, "--json"]
        for app in android_apps:
            args += ["--android-app", app]
        if authenticator:
            args.append("--authenticator")
        if require_par:
            args.append("--require-par")
        if device_sso_group:
            args += ["--device-sso-group", device_sso_group]
        for app in ios_apps:
            args += ["--ios-app", app]
        if client_id:
            args += ["--id", client_id]
        for uri in redirect_uris:
            args += ["--redirect-uri", uri]
        for uri in post_logout_redirect_uris:
            args += ["--post-logout-redirect-uri", uri]
        if public:
            args.append("--public")
        if secret:
            args += ["--secret", secret]
        for scope in scopes:
            args += ["--scope", scope]
        for grant in grant_types:
            args += ["--grant-type", grant]
        if first_party:
            args.append("--first-party")
        if jwks_file:
            args += ["--jwks", str(jwks_file)]
        if assertion_issuer:
            args += ["--assertion-issuer", assertion_issuer]
        if assertion_lifetime:
            args += ["--assertion-lifetime", assertion_lifetime]
        if pairwise:
            args.append("--pairwise")
        if resource_server:
            args.append("--resource-server")
        return json.loads(self.run(*args))

    def add_user(self, email: str, password: str, name: str | None = None) -> dict:
        args = ["users", "add", email, "--password-stdin", "--json"]
        if name:
            args += ["--name", name]
        return json.loads(self.run(*args, input=password + "\n"))

    def rotate_keys(self) -> str:
        """Returns the kid the command says is now current."""
        out = self.run("keys", "rotate").strip()
        return out.split()[-1]


# ---------------------------------------------------------------------------
# Clients and users, registered in the background


@dataclass
class Client:
    client_id: str
    client_secret: str | None
    redirect_uris: list[str]
    registration: dict
    private_key: Any = None  # a joserfc key, for private_key_jwt clients
    kid: str | None = None
    assertion_issuer: str | None = None
    post_logout_redirect_uris: list[str] = field(default_factory=list)

    @property
    def redirect_uri(self) -> str:
        return self.redirect_uris[0]


@dataclass
class User:
    id: str
    email: str
    password: str
    name: str | None


class Registry:
    """Registers clients and users through the CLI on two worker threads (each CLI
    call costs about two seconds in a debug build), so that registration overlaps the
    first tests. `client(name)` waits for that client."""

    def __init__(self, cli: CLI, workers: int = 2):
        self.cli = cli
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="registry")
        self.futures: dict[str, Future] = {}
        self.lock = threading.Lock()

    def submit(self, name: str, make: Callable[[], Any]) -> None:
        def attempt() -> Any:
            for tries in range(3):
                try:
                    return make()
                except Exception as error:  # noqa: BLE001 - retried, then raised with its message
                    if tries == 2:
                        raise RuntimeError(f"registering {name} failed: {error}") from error
                    print(f"e2e: registering {name} failed, retrying: {error}", file=sys.stderr)
                    time.sleep(1)

        with self.lock:
            if name not in self.futures:
                self.futures[name] = self.pool.submit(attempt)

    def get(self, name: str) -> Any:
        with self.lock:
            future = self.futures[name]
        return future.result(timeout=300)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------------
# The provider, seen as a relying party sees it


class Provider:
    def __init__(self, issuer: str):
        self.issuer = issuer
        self.http = requests.Session()
        self._config: dict | None = None

    @property
    def config(self) -> dict:
        if self._config is None:
            r = self.http.get(self.issuer + "/.well-known/openid-configuration", timeout=10)
            r.raise_for_status()
            self._config = r.json()
        return self._config

    def endpoint(self, name: str) -> str:
        return self.config[name]

    def jwks(self) -> dict:
        r = self.http.get(self.config["jwks_uri"], timeout=10)
        r.raise_for_status()
        return r.json()

    def verify_jwt(self, token: str, jwks: dict | None = None) -> tuple[dict, dict]:
        """Verifies a JWS against the provider's JWKS; returns (header, claims)."""
        key_set = KeySet.import_key_set(jwks or self.jwks())
        header = unverified_header(token)
        algorithms = self.config["id_token_signing_alg_values_supported"]
        assert header.get("alg") in algorithms, header
        assert header.get("kid"), f"no kid in header {header}"
        decoded = jwt.decode(token, key_set, algorithms=[header["alg"]])
        return dict(decoded.header), dict(decoded.claims)

    def verify_id_token(self, token: str, client: Client, *, nonce: str | None = None,
                        access_token: str | None = None, jwks: dict | None = None) -> dict:
        header, claims = self.verify_jwt(token, jwks)
        assert header.get("typ") in (None, "JWT"), header
        now = time.time()
        assert claims["iss"] == self.issuer
        aud = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        assert client.client_id in aud
        assert claims.get("azp", client.client_id) == client.client_id
        assert isinstance(claims["sub"], str) and claims["sub"]
        assert claims["exp"] > now - 5
        assert claims["iat"] <= now + 60
        if nonce is not None:
            assert claims.get("nonce") == nonce
        if access_token is not None:
            assert claims.get("at_hash") == half_hash(access_token)
        return claims

    def verify_access_token(self, token: str, client: Client, jwks: dict | None = None) -> dict:
        header, claims = self.verify_jwt(token, jwks)
        assert header.get("typ", "").lower() in ("at+jwt", "application/at+jwt"), header
        assert claims["iss"] == self.issuer
        aud = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        assert self.issuer in aud
        assert claims["client_id"] == client.client_id
        for name in ("sub", "exp", "iat", "jti"):
            assert name in claims, f"access token lacks {name}: {claims}"
        return claims

    # -- token endpoint and friends, raw

    def post(self, endpoint_name: str, data: dict | list, *, client: Client | None = None, auth_method: str | None = None,
             headers: dict | None = None) -> requests.Response:
        data = list(data.items()) if isinstance(data, dict) else list(data)
        auth = None
        if client is not None:
            auth, extra = client_auth(self, client, auth_method)
            data += extra
        return self.http.post(self.endpoint(endpoint_name), data=data, auth=auth, headers=headers,
                              allow_redirects=False, timeout=30)

    def redeem(self, client: Client, result: "AuthResult", *, auth_method: str | None = None, **overrides) -> requests.Response:
        data = {"grant_type": "authorization_code", "code": result.code, "redirect_uri": result.sent.get("redirect_uri"),
                "code_verifier": result.code_verifier}
        data.update(overrides)
        data = {k: v for k, v in data.items() if v is not None}
        return self.post("token_endpoint", data, client=client, auth_method=auth_method)

    def redeem_code(self, client: Client, code: str, code_verifier: str | None,
                    redirect_uri: str | None = None) -> requests.Response:
        data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri or client.redirect_uri}
        if code_verifier:
            data["code_verifier"] = code_verifier
        return self.post("token_endpoint", data, client=client)

    def refresh(self, client: Client, refresh_token: str, **extra) -> requests.Response:
        return self.post("token_endpoint", {"grant_type": "refresh_token", "refresh_token": refresh_token, **extra}, client=client)

    def userinfo(self, access_token: str) -> requests.Response:
        return self.http.get(self.endpoint("userinfo_endpoint"), headers={"Authorization": f"Bearer {access_token}"}, timeout=10)

    def introspect(self, client: Client, token: str, **extra) -> requests.Response:
        return self.post("introspection_endpoint", {"token": token, **extra}, client=client)

    def revoke(self, client: Client, token: str, **extra) -> requests.Response:
        return self.post("revocation_endpoint", {"token": token, **extra}, client=client)


def client_auth(provider: Provider, client: Client, method: str | None = None) -> tuple[Any, list]:
    """(requests auth, extra form fields) for a client's authentication method."""
    if method is None:
        method = client.registration.get("token_endpoint_auth_method", "client_secret_basic")
    if method == "client_secret_basic":
        from urllib.parse import quote
        return requests.auth.HTTPBasicAuth(quote(client.client_id, safe=""), quote(client.client_secret or "", safe="")), []
    if method == "client_secret_post":
        return None, [("client_id", client.client_id), ("client_secret", client.client_secret or "")]
    if method == "none":
        return None, [("client_id", client.client_id)]
    if method == "private_key_jwt":
        return None, [("client_assertion_type", JWT_BEARER),
                      ("client_assertion", make_assertion(client, audience=provider.issuer))]
    raise ValueError(method)


def make_assertion(client: Client, *, audience: str, iss: str | None = None, sub: str | None = None,
                   jti: str | None | bool = True, lifetime: int = 120, iat: int | None = None, key: Any = None,
                   alg: str | None = None, kid: str | None = None) -> str:
    """A client assertion JWT (RFC 7523 §3) signed with the client's key.
    jti=True makes a random one, jti=None leaves it out (Sign in with Apple shape)."""
    key = key or client.private_key
    now = int(time.time()) if iat is None else iat
    claims: dict[str, Any] = {"iss": iss or client.client_id, "sub": sub or client.client_id, "aud": audience,
                              "iat": now, "exp": now + lifetime}
    if jti is True:
        claims["jti"] = str(uuid.uuid4())
    elif isinstance(jti, str):
        claims["jti"] = jti
    if alg is None:
        alg = "ES256" if key.key_type == "EC" else "RS256"
    header = {"alg": alg, "kid": kid or client.kid}
    return jwt.encode(header, claims, key, algorithms=[alg])


def assert_oauth_error(response: requests.Response, error: str, status: int | None = None) -> dict:
    """An RFC 6749 §5.2 JSON error with exactly this code, and no token in it."""
    expected_status = status or (401 if error == "invalid_client" else 400)
    try:
        body = response.json()
    except ValueError:
        raise AssertionError(f"not JSON ({response.status_code}): {response.text[:300]}")
    assert (response.status_code, body.get("error")) == (expected_status, error), \
        f"expected {expected_status} {error}, got {response.status_code} {body}"
    for key in TOKEN_KEYS:
        assert key not in body, f"an error response carried {key}"
    if error == "invalid_client":
        assert response.headers.get("WWW-Authenticate"), "invalid_client without WWW-Authenticate"
    return body


def assert_tokens(response: requests.Response) -> dict:
    assert response.status_code == 200, f"{response.status_code} {response.text[:500]}"
    body = response.json()
    assert body.get("access_token"), body
    assert body.get("token_type", "").lower() == "bearer", body
    assert "no-store" in response.headers.get("Cache-Control", ""), response.headers
    return body


# ---------------------------------------------------------------------------
# HTML forms, parsed without a browser


@dataclass
class Form:
    action: str
    method: str
    id: str | None
    fields: dict[str, str]
    buttons: list[tuple[str | None, str | None, str]]  # (name, value, text)


class _PageParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self.title = ""
        self.texts: list[str] = []
        self._in_title = False
        self._button: list | None = None
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), (a.get("method") or "get").lower(), a.get("id"), {}, []))
        elif tag == "input" and self.forms and a.get("name"):
            if a.get("type", "text") not in ("submit", "button"):
                self.forms[-1].fields[a["name"]] = a.get("value") or ""
        elif tag == "button" and self.forms:
            self._button = [a.get("name"), a.get("value"), ""]
        elif tag == "title":
            self._in_title = True
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "button" and self._button is not None:
            self.forms[-1].buttons.append((self._button[0], self._button[1], self._button[2].strip()))
            self._button = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._button is not None:
            self._button[2] += data
        if data.strip():
            self.texts.append(data.strip())


@dataclass
class Page:
    title: str
    forms: list[Form]
    text: str
    scripts: int

    def form(self, action: str | None = None, id: str | None = None) -> Form | None:
        for f in self.forms:
            if (action is None or f.action == action) and (id is None or f.id == id):
                return f
        return None


def parse_page(text: str) -> Page:
    p = _PageParser()
    p.feed(text)
    return Page(p.title.strip(), p.forms, " ".join(p.texts), p.scripts)


# ---------------------------------------------------------------------------
# A user agent without a browser: follows the hosted login and consent pages


@dataclass
class AuthResult:
    kind: str  # redirect | login | consent | error_page | form_post
    response: requests.Response
    sent: dict  # the authorization request parameters (last value of each)
    code_verifier: str | None = None
    params: dict[str, str] = field(default_factory=dict)  # the authorization response
    location: str | None = None
    in_fragment: bool = False
    seen: list[str] = field(default_factory=list)  # pages shown on the way: login, consent
    page: Page | None = None

    @property
    def code(self) -> str | None:
        return self.params.get("code")

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    def describe(self) -> str:
        return (f"{self.kind} after {self.seen}: status {self.response.status_code}, params {self.params}, "
                f"location {self.location}, page {self.page.title if self.page else None!r}: "
                f"{self.page.text[:300] if self.page else self.response.text[:300]}")


def single_params(pairs: list[tuple[str, str]]) -> dict[str, str]:
    return {k: v for k, v in pairs}


class UserAgent:
    """A cookie jar that walks the authorization flow like a browser without JavaScript."""

    def __init__(self, provider: Provider, accept_language: str | None = None):
        self.provider = provider
        self.http = requests.Session()
        if accept_language:
            self.http.headers["Accept-Language"] = accept_language

    def authorization_params(self, client: Client, *, scope: str = "openid profile email offline_access",
                             pkce: bool = True, **extra: Any) -> tuple[list[tuple[str, str]], str | None]:
        verifier = random_token(48) if pkce else None
        params: dict[str, Any] = {
            "response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
            "scope": scope, "state": random_token(12), "nonce": random_token(12),
        }
        if verifier:
            params["code_challenge"] = s256(verifier)
            params["code_challenge_method"] = "S256"
        params.update(extra)
        pairs = [(k, v) for k, v in params.items() if v is not None]
        return pairs, verifier

    def authorize(self, client: Client, *, user: User | None = None, consent: str | None = "allow",
                  provider: Provider | None = None, method: str = "GET", pairs: list[tuple[str, str]] | None = None,
                  code_verifier: str | None = None, url: str | None = None, **params: Any) -> AuthResult:
        """Sends an authorization request and walks the hosted pages: signs in as `user`
        if asked to, answers consent with `consent` ('allow', 'deny' or None to stop)."""
        provider = provider or self.provider
        endpoint = provider.endpoint("authorization_endpoint")
        if url is not None:
            query = urlsplit(url).query
            pairs = [(k, v) for k, vs in parse_qs(query, keep_blank_values=True).items() for v in vs]
            response = self.http.get(url, allow_redirects=False, timeout=30)
        else:
            if pairs is None:
                pairs, code_verifier = self.authorization_params(client, **params)
            if method == "GET":
                response = self.http.get(endpoint, params=pairs, allow_redirects=False, timeout=30)
            else:
                response = self.http.post(endpoint, data=pairs, allow_redirects=False, timeout=30)
        sent = single_params(pairs)
        return self.follow(response, sent, code_verifier, user=user, consent=consent, provider=provider)

    def follow(self, response: requests.Response, sent: dict, code_verifier: str | None, *, user: User | None,
               consent: str | None, provider: Provider) -> AuthResult:
        seen: list[str] = []
        for _ in range(10):
            if response.status_code in (301, 302, 303, 307):
                location = urljoin(response.url, response.headers["Location"])
                if location.startswith(provider.issuer + "/"):
                    response = self.http.get(location, allow_redirects=False, timeout=30)
                    continue
                parts = urlsplit(location)
                in_fragment = bool(parts.fragment)
                raw = parts.fragment if in_fragment else parts.query
                params = {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}
                return AuthResult("redirect", response, sent, code_verifier, params, location, in_fragment, seen)
            page = parse_page(response.text) if "html" in response.headers.get("Content-Type", "") else None
            if page is None:
                return AuthResult("other", response, sent, code_verifier, seen=seen)
            login = page.form(action="/login")
            consent_form = page.form(action="/consent")
            post_back = page.form(id="response")
            if login is not None:
                if user is None or "login" in seen:
                    return AuthResult("login", response, sent, code_verifier, seen=seen + ["login"], page=page)
                seen.append("login")
                data = dict(login.fields, email=user.email, password=user.password)
                response = self.http.post(urljoin(response.url, login.action), data=data, allow_redirects=False, timeout=60)
                continue
            if consent_form is not None:
                if consent is None or "consent" in seen:
                    return AuthResult("consent", response, sent, code_verifier, seen=seen + ["consent"], page=page)
                seen.append("consent")
                data = dict(consent_form.fields, decision=consent)
                response = self.http.post(urljoin(response.url, consent_form.action), data=data, allow_redirects=False,
                                          timeout=30)
                continue
            if post_back is not None:
                return AuthResult("form_post", response, sent, code_verifier, dict(post_back.fields), post_back.action,
                                  False, seen, page)
            return AuthResult("error_page", response, sent, code_verifier, seen=seen, page=page)
        raise AssertionError("too many steps in the authorization flow")

    def sign_in(self, client: Client, user: User, **params: Any) -> AuthResult:
        """A whole successful flow; returns the redirect carrying the code."""
        result = self.authorize(client, user=user, **params)
        assert result.kind == "redirect" and result.code, result.describe()
        return result

    def tokens(self, client: Client, user: User | None = None, **params: Any) -> dict:
        """Signs in (or uses the session) and redeems the code; returns the token response."""
        result = self.authorize(client, user=user, **params)
        assert result.kind == "redirect" and result.code, result.describe()
        body = assert_tokens(self.provider.redeem(client, result))
        body["_nonce"] = result.sent.get("nonce")
        return body

    def cookie(self, name: str):
        for c in self.http.cookies:
            if c.name == name:
                return c
        return None


def set_cookie_headers(response: requests.Response) -> list[str]:
    raw = response.raw.headers.getlist("Set-Cookie") if hasattr(response.raw.headers, "getlist") else []
    return raw or ([response.headers["Set-Cookie"]] if "Set-Cookie" in response.headers else [])


# ---------------------------------------------------------------------------
# The relying party's redirect URI: a tiny HTTP server that records what arrives


@dataclass
class Callback:
    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    at: float

    @property
    def params(self) -> dict[str, str]:
        return self.form if self.method == "POST" else self.query


class CallbackServer:
    def __init__(self):
        self.records: list[Callback] = []
        self.cond = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self, form: dict[str, str]):
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                with outer.cond:
                    outer.records.append(Callback(self.command, parts.path, query, form, time.time()))
                    outer.cond.notify_all()
                body = (f"<!doctype html><html><head><title>Callback received</title></head><body>"
                        f"<h1>Callback received</h1><p>{self.command} {parts.path}</p></body></html>").encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._record({})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                self._record({k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()})

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, predicate: Callable[[Callback], bool], timeout: float = 30) -> Callback | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for record in self.records:
                    if predicate(record):
                        return record
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def query_url(base: str, params: dict | list) -> str:
    return base + ("&" if "?" in base else "?") + urlencode(params)


def new_chromium(width: int = 900, height: int = 1000):
    """Headless Chromium through chromedriver (both from Debian), English, at a desktop size."""
    import shutil
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                     "--lang=en-US", "--disable-gpu", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    browser.set_page_load_timeout(60)
    return browser


PHONE_WIDTH = 390


def screenshot_both(driver, path: Path) -> None:
    """The page as it is, whole, at the window's width (`path`) and at a phone's 390 px
    (`…-phone.png`), the window's size restored after; a hosted page must fit the phone's width."""
    width, height = driver.get_window_size()["width"], driver.get_window_size()["height"]
    try:
        for size, target in ((width, path), (PHONE_WIDTH, path.with_name(path.stem + "-phone.png"))):
            driver.set_window_size(size, height)
            full = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(size, min(max(full + 120, height), 6000))
            driver.save_screenshot(str(target))
            if size == PHONE_WIDTH:
                wide = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
                assert wide <= 0, f"{target.name}: the page is {wide} px wider than a phone"
    finally:
        driver.set_window_size(width, height)


def wait_for_next_page(driver, element, timeout: float = 30) -> None:
    """Waits until `element` (a button just pressed) has left the document, and the answer's
    page has loaded: the button is gone as soon as the old page unloads, before the new one is
    parsed (a loaded machine once showed a page without its notice yet). Chromium says the button
    is gone in more than one way (a stale reference, or a node that "does not belong to the
    document"), so any refusal to read it counts."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def gone(_) -> bool:
        try:
            element.is_enabled()
            return False
        except WebDriverException:
            return True

    def loaded(_) -> bool:
        try:
            return driver.execute_script("return document.readyState") == "complete"
        except WebDriverException:
            return False

    WebDriverWait(driver, timeout).until(gone)
    WebDriverWait(driver, timeout).until(loaded)
