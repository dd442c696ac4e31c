"""Fixtures of the end-to-end tests: one `tessera serve` for the whole session on a
free loopback port with its own SQLite database, the admin CLI on that database,
clients and users registered through it, a relying-party callback server, and a
signed-in user agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from joserfc.jwk import ECKey, RSAKey

from e2e_support import (new_database, APPLE_TEAM_ID, ARTIFACTS, CLI, PASSWORD, SPECIAL_SECRET, CallbackServer, Client, Provider,
                         Registry, TesseraServer, User, UserAgent, tessera_binary)
from smtp_sink import SMTPSink

_state: dict = {}


@pytest.fixture(scope="module")
def sink():
    """A local SMTP sink for the module's servers to send their mail to (one per module)."""
    relay = SMTPSink().start()
    yield relay
    relay.stop()


# ---------------------------------------------------------------------------
# Server log on failure


_log_offset = pytest.StashKey[int]()


def pytest_runtest_setup(item):
    server = _state.get("server")
    item.stash[_log_offset] = server.log_size() if server else 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    server = _state.get("server")
    if report.failed and server is not None:
        text = server.log()[item.stash.get(_log_offset, 0):]
        if text.strip():
            report.sections.append(("tessera serve stderr (during this test)", text[-3000:]))


def pytest_terminal_summary(terminalreporter, exitstatus):
    server = _state.get("server")
    if server is not None and exitstatus not in (0, 5):
        terminalreporter.write_sep("-", f"tessera serve stderr, last lines ({server.stderr_path})")
        terminalreporter.write_line("\n".join(server.log().splitlines()[-40:]))


# ---------------------------------------------------------------------------
# The server


@pytest.fixture(scope="session")
def binary() -> str:
    return tessera_binary()


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tessera")


@pytest.fixture(scope="session")
def database(workdir) -> Path:
    return new_database(workdir, "tessera")


# The whole suite comes from one address: it gets a generous share of sign-ins and hashing.
SERVER_ENV = {"TESSERA_LOGIN_FAILURES_PER_ADDRESS": "1000", "TESSERA_FLOWS_PER_ADDRESS": "100000",
              "TESSERA_HASHING_PER_ADDRESS": "100000", "TESSERA_LOG_LEVEL": "info"}


@pytest.fixture(scope="session")
def server(binary, database, workdir):
    srv = TesseraServer(binary, database, workdir, env=SERVER_ENV, name="main").start()
    _state["server"] = srv
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def start_server(binary, database, workdir):
    """Starts more servers (same database unless told otherwise); all stopped at the end."""
    started: list[TesseraServer] = []

    def start(db: Path | None = None, env: dict | None = None, name: str = "extra") -> TesseraServer:
        srv = TesseraServer(binary, db or database, workdir, env={**SERVER_ENV, **(env or {})}, name=name).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


@pytest.fixture(scope="session")
def cli(binary, database, workdir, server) -> CLI:
    return CLI(binary, database, workdir)


@pytest.fixture(scope="session")
def op(server) -> Provider:
    """The provider as a relying party sees it (discovery, JWKS, endpoints)."""
    return Provider(server.issuer)


@pytest.fixture(scope="session")
def callback():
    cb = CallbackServer()
    yield cb
    cb.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


# ---------------------------------------------------------------------------
# Clients and users: all registered in the background at the start


def _write_json(path: Path, value) -> Path:
    path.write_text(json.dumps(value))
    return path


def _key_client(cli: CLI, workdir: Path, name: str, key, kid: str, **spec) -> Client:
    """A private_key_jwt client: the key pair made with `cryptography`, its public JWK registered with --jwks."""
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    jose_key = (ECKey if isinstance(key, ec.EllipticCurvePrivateKey) else RSAKey).import_key(pem)
    public = jose_key.as_dict(private=False)
    public.update(kid=kid, use="sig", alg="ES256" if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256")
    jwks_file = _write_json(workdir / f"{name}-jwks.json", {"keys": [public]})
    reg = cli.add_client(name, jwks_file=jwks_file, **spec)
    return Client(reg["client_id"], None, reg["redirect_uris"], reg, private_key=jose_key, kid=kid,
                  assertion_issuer=spec.get("assertion_issuer"), post_logout_redirect_uris=reg["post_logout_redirect_uris"])


def _secret_client(cli: CLI, name: str, **spec) -> Client:
    reg = cli.add_client(name, **spec)
    return Client(reg["client_id"], reg.get("client_secret"), reg["redirect_uris"], reg,
                  post_logout_redirect_uris=reg["post_logout_redirect_uris"])


def _user(cli: CLI, email: str, name: str | None) -> User:
    reg = cli.add_user(email, PASSWORD, name)
    return User(reg["id"], reg["email"], PASSWORD, reg["profile"].get("name"))


@pytest.fixture(scope="session")
def registry(cli, callback, workdir):
    reg = Registry(cli)
    cb, cb2, lo = callback.base + "/cb", callback.base + "/cb2", callback.base + "/logged-out"
    # The most used first: the tests start while the rest is still being registered.
    reg.submit("user:alice", lambda: _user(cli, "alice@example.com", "Alice Liddell"))
    reg.submit("first", lambda: _secret_client(cli, "First-party App", redirect_uris=[cb],
                                               post_logout_redirect_uris=[lo, callback.base + "/first-bye"],
                                               first_party=True))
    reg.submit("web", lambda: _secret_client(cli, "Web App", redirect_uris=[cb, cb2], post_logout_redirect_uris=[lo]))
    reg.submit("spa", lambda: _secret_client(cli, "Single-page App", redirect_uris=[cb], post_logout_redirect_uris=[lo],
                                             public=True))
    reg.submit("user:carol", lambda: _user(cli, "carol@example.com", "Carol"))
    reg.submit("rsa_jwt", lambda: _key_client(cli, workdir, "RSA Key App", rsa.generate_private_key(65537, 2048), "rsa-e2e-1",
                                              redirect_uris=[cb], first_party=True))
    reg.submit("apple", lambda: _key_client(cli, workdir, "Apple-style App", ec.generate_private_key(ec.SECP256R1()),
                                            "ABC123DEFG", redirect_uris=[cb], first_party=True,
                                            assertion_issuer=APPLE_TEAM_ID, assertion_lifetime="15777000"))
    reg.submit("service", lambda: _secret_client(cli, "Backend Service", grant_types=["client_credentials"],
                                                 scopes=["api.read", "api.write"]))
    reg.submit("special", lambda: _secret_client(cli, "Special Characters", client_id="e2e.special-client_1",
                                                 secret=SPECIAL_SECRET, grant_types=["client_credentials"],
                                                 scopes=["api.read"]))
    reg.submit("limited", lambda: _secret_client(cli, "Limited App", redirect_uris=[cb], first_party=True,
                                                 scopes=["openid", "email"], grant_types=["authorization_code"]))
    reg.submit("pairwise", lambda: _secret_client(cli, "Pairwise App", redirect_uris=[cb], first_party=True, pairwise=True))
    for name in ("consent_none", "consent_remember", "consent_deny", "consent_ru", "browser"):
        reg.submit(name, lambda name=name: _secret_client(cli, name.replace("_", " ").title(), redirect_uris=[cb],
                                                          post_logout_redirect_uris=[lo]))
    reg.submit("user:locked", lambda: _user(cli, "locked@example.com", None))
    yield reg
    reg.close()


def _client_fixture(name: str):
    def fixture(registry) -> Client:
        return registry.get(name)
    fixture.__name__ = name + "_client"
    return pytest.fixture(scope="session", name=name + "_client")(fixture)


first_client = _client_fixture("first")
web_client = _client_fixture("web")
spa_client = _client_fixture("spa")
rsa_jwt_client = _client_fixture("rsa_jwt")
apple_client = _client_fixture("apple")
service_client = _client_fixture("service")
limited_client = _client_fixture("limited")
pairwise_client = _client_fixture("pairwise")
browser_client = _client_fixture("browser")


@pytest.fixture(scope="session")
def clients(registry):
    """Any registered client by name: clients('consent_deny')."""
    return registry.get


@pytest.fixture(scope="session")
def alice(registry) -> User:
    return registry.get("user:alice")


@pytest.fixture(scope="session")
def carol(registry) -> User:
    return registry.get("user:carol")


@pytest.fixture(scope="session")
def locked_user(registry) -> User:
    return registry.get("user:locked")


@pytest.fixture(scope="session")
def alice_agent(op, alice, first_client) -> UserAgent:
    """A user agent with a live session of alice (signed in once, for the whole run).
    Tests may add sessions or consents to it but must not log it out."""
    agent = UserAgent(op)
    agent.sign_in(first_client, alice)
    return agent


@pytest.fixture
def agent(op) -> UserAgent:
    """A fresh user agent: no cookies, no session."""
    return UserAgent(op)


@pytest.fixture(scope="session", autouse=True)
def _register_early(registry):
    """Starts the background registrations before the first test."""
    yield
