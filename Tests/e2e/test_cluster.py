"""Three `tessera serve` nodes on one PostgreSQL database behind HAProxy (Debian's, round
robin, health-checked on /health/ready), as an operator runs them (issue 14):

- headless Chromium signs in on one node, the code is redeemed at another and refreshed at the
  third, and the session signs it in silently through the balancer;
- 50 concurrent refreshes of one refresh token, spread over the nodes, give exactly one new
  token, and the family is revoked;
- refresh tokens of both kinds (stored, as with `--stored-refresh-tokens` during a rolling
  upgrade, and family tokens) rotate on every node, and reuse revokes either;
- a key rotated in the shared database is used and published by every node within seconds;
- a node killed with SIGKILL during a load of sign-ins and refreshes loses no token that was
  answered, an app retrying a refresh that died with the node goes on (nodes with a reuse
  interval), and the load balancer's other nodes keep answering.

Runs only against PostgreSQL (E2E_POSTGRES); HAProxy is installed from Debian when missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from conftest import SERVER_ENV
from test_browser import Flow, driver, sign_in, wait_callback, wait_title  # noqa: F401 (driver: the Chromium fixture)
from e2e_support import (CLI, POSTGRES, Client, Provider, TesseraServer, User, UserAgent, assert_oauth_error, assert_tokens,
                         free_port, new_database, query_rows, unverified_header)

pytestmark = pytest.mark.skipif(POSTGRES is None, reason="a cluster shares a PostgreSQL database (E2E_POSTGRES)")

PASSWORD = "cluster-password-0123"
REDIRECT = "http://127.0.0.1:9/cluster-callback"


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or (os.path.exists("/usr/sbin/haproxy") and "/usr/sbin/haproxy")
    if not found:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        installed = subprocess.run(["apt-get", "install", "-y", "-q", "haproxy"], capture_output=True, text=True, env=env)
        if installed.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env)
            subprocess.run(["apt-get", "install", "-y", "-q", "haproxy"], capture_output=True, check=True, env=env)
        # Debian starts the packaged service; the test runs its own.
        subprocess.run(["service", "haproxy", "stop"], capture_output=True)
        found = shutil.which("haproxy") or "/usr/sbin/haproxy"
    return found


class LoadBalancer:
    """HAProxy in the foreground, round robin over the nodes, a node out after two failed
    /health/ready checks half a second apart; a request refused by a dead node is sent to another."""

    def __init__(self, workdir: Path, port: int, nodes: list[TesseraServer]):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        servers = "\n".join(f"    server node{i} 127.0.0.1:{node.port} check" for i, node in enumerate(nodes))
        workdir.mkdir(parents=True, exist_ok=True)
        self.config = workdir / "haproxy.cfg"
        self.config.write_text(f"""global
    maxconn 2000
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch 1
frontend tessera
    bind 127.0.0.1:{port}
    default_backend nodes
backend nodes
    balance roundrobin
    option httpchk GET /health/ready
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2
{servers}
""")
        self.log = open(workdir / "haproxy.log", "wb")
        self.process = subprocess.Popen([haproxy_binary(), "-db", "-f", str(self.config)], stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if requests.get(self.url + "/health/ready", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError("HAProxy did not start: " + (workdir / "haproxy.log").read_text(errors="replace"))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.log.close()


class NodeProvider(Provider):
    """The provider (issuer: the load balancer's URL) reached at one node directly."""

    def __init__(self, issuer: str, node: TesseraServer):
        super().__init__(issuer)
        self.node_url = f"http://127.0.0.1:{node.port}"

    @property
    def config(self) -> dict:
        if self._config is None:
            document = self.http.get(self.node_url + "/.well-known/openid-configuration", timeout=10).json()
            assert document["issuer"] == self.issuer
            self._config = {k: v.replace(self.issuer, self.node_url, 1) if isinstance(v, str) and v.startswith(self.issuer + "/")
                            else v for k, v in document.items()}
        return self._config


def start_cluster(binary, workdir, database, name: str, args: tuple[str, ...] = ()):
    """Three nodes on `database` (their issuer: the balancer's URL) behind a new balancer."""
    lb_port = free_port()
    issuer = f"http://127.0.0.1:{lb_port}"
    nodes = [TesseraServer(binary, database, workdir, env=SERVER_ENV, name=f"{name}-node{i}",
                           args=["--issuer", issuer, *args]).start()
             for i in range(3)]
    return issuer, nodes, LoadBalancer(workdir / name, lb_port, nodes)


def stop_cluster(balancer: LoadBalancer, nodes: list[TesseraServer]) -> None:
    balancer.stop()
    for node in nodes:
        node.stop()


@pytest.fixture(scope="module")
def cluster(binary, workdir, callback):
    database = new_database(workdir, "cluster")
    cli = CLI(binary, database, workdir)
    registration = cli.add_client("Cluster App", redirect_uris=[REDIRECT, callback.base + "/cluster"], first_party=True,
                                  grant_types=["authorization_code", "refresh_token"],
                                  scopes=["openid", "email", "offline_access"])
    client = Client(registration["client_id"], registration["client_secret"], registration["redirect_uris"], registration)
    service = cli.add_client("Cluster Service", grant_types=["client_credentials"], scopes=["api"])
    service_client = Client(service["client_id"], service["client_secret"], [], service)
    user_reg = cli.add_user("cluster@example.com", PASSWORD)
    user = User(user_reg["id"], user_reg["email"], PASSWORD, None)
    issuer, nodes, balancer = start_cluster(binary, workdir, database, "cluster")
    yield {"issuer": issuer, "nodes": nodes, "lb": balancer, "client": client, "service": service_client, "user": user, "cli": cli,
           "database": database}
    stop_cluster(balancer, nodes)


def test_sign_in_on_one_node_redeem_on_another_refresh_on_the_third(cluster, driver, callback, artifacts):
    """Headless Chromium signs in on the first node's hosted page; the code is redeemed at the
    second node and the refresh token used at the third."""
    issuer, nodes, user = cluster["issuer"], cluster["nodes"], cluster["user"]
    client = Client(cluster["client"].client_id, cluster["client"].client_secret, [callback.base + "/cluster"],
                    cluster["client"].registration)
    at = [NodeProvider(issuer, node) for node in nodes]
    flow = Flow(at[0], client, scope="openid email offline_access")
    driver.get(flow.url)
    wait_title(driver, "Sign in")
    assert driver.current_url.startswith(at[0].node_url + "/"), driver.current_url
    driver.save_screenshot(str(artifacts / "cluster-01-sign-in-on-node-1.png"))
    sign_in(driver, user)
    record = wait_callback(callback, driver, flow.state)
    assert record.params.get("iss") == issuer and record.params.get("code")
    tokens = assert_tokens(at[1].redeem_code(client, record.params["code"], flow.verifier))
    at[1].verify_id_token(tokens["id_token"], client, nonce=flow.nonce, access_token=tokens["access_token"])
    refreshed = assert_tokens(at[2].refresh(client, tokens["refresh_token"]))
    assert refreshed["refresh_token"] != tokens["refresh_token"]
    # Every node accepts what another issued.
    for provider in at:
        assert provider.userinfo(refreshed["access_token"]).json()["sub"] == user.id
    # The browser's session (in the database) signs it in silently through the balancer, whichever
    # node each request lands on.
    for _ in range(3):
        silent = Flow(Provider(issuer), client, prompt="none", scope="openid")
        driver.get(silent.url)
        assert wait_callback(callback, driver, silent.state).params.get("code")


def test_concurrent_refreshes_across_nodes_give_one_token_and_revoke_the_family(cluster):
    issuer, client = cluster["issuer"], cluster["client"]
    lb = Provider(issuer)
    tokens = UserAgent(lb).tokens(client, cluster["user"], scope="openid offline_access")
    token = tokens["refresh_token"]
    barrier = threading.Barrier(50)

    def refresh(_: int) -> requests.Response:
        session = requests.Session()  # a connection of its own: HAProxy spreads them round robin
        barrier.wait()
        return session.post(lb.endpoint("token_endpoint"), data={"grant_type": "refresh_token", "refresh_token": token},
                            auth=(client.client_id, client.client_secret), timeout=60)

    with ThreadPoolExecutor(50) as pool:
        answers = list(pool.map(refresh, range(50)))
    winners = [a for a in answers if a.status_code == 200]
    assert len(winners) == 1, [(a.status_code, a.text[:80]) for a in answers if a.status_code != 400]
    for answer in answers:
        if answer.status_code != 200:
            assert_oauth_error(answer, "invalid_grant")
    # The reuse revoked the family: the one new token is dead too.
    assert_oauth_error(lb.refresh(client, winners[0].json()["refresh_token"]), "invalid_grant")


def test_stored_and_family_refresh_tokens_rotate_on_every_node(cluster, binary, workdir):
    """A rolling upgrade from a release before family tokens: a node started with
    `--stored-refresh-tokens` issues tokens with rows of their own (as that release did, so its
    nodes could rotate them), the others family tokens, kept on their grant's row. Every node of
    this release rotates both kinds, a family keeps its kind, and reuse revokes either."""
    issuer, nodes, client, user, database = (cluster["issuer"], cluster["nodes"], cluster["client"], cluster["user"],
                                             cluster["database"])
    stored_node = TesseraServer(binary, database, workdir, env=SERVER_ENV, name="cluster-stored",
                                args=["--issuer", issuer, "--stored-refresh-tokens"]).start()
    try:
        stored_at, family_at = NodeProvider(issuer, stored_node), NodeProvider(issuer, nodes[0])

        def rows() -> int:
            return int(query_rows(database, "SELECT count(*) FROM refresh_tokens")[0][0])

        # A stored token (base64url, no dot) from the node told to issue them, refreshed at a node
        # that issues family tokens: the family stays stored, one row a rotation.
        stored = UserAgent(stored_at).tokens(client, user, scope="openid offline_access")["refresh_token"]
        assert "." not in stored
        before = rows()
        once = assert_tokens(family_at.refresh(client, stored))["refresh_token"]
        twice = assert_tokens(stored_at.refresh(client, once))["refresh_token"]
        assert "." not in once and "." not in twice and rows() == before + 2
        assert_oauth_error(family_at.refresh(client, stored), "invalid_grant")  # reuse: the family ends
        assert_oauth_error(stored_at.refresh(client, twice), "invalid_grant")

        # A family token (grant.generation.secret.tag) refreshed at the stored node: the family
        # stays a family, on its grant's row (no row a token).
        family = UserAgent(family_at).tokens(client, user, scope="openid offline_access")["refresh_token"]
        grant, generation, _, _ = family.split(".")
        before = rows()
        once = assert_tokens(stored_at.refresh(client, family))["refresh_token"]
        twice = assert_tokens(family_at.refresh(client, once))["refresh_token"]
        assert once.split(".")[:2] == [grant, "1"] and twice.split(".")[:2] == [grant, "2"] and generation == "0"
        assert rows() == before
        # Its first token again: reuse of generation 0, known without a row; the family ends.
        assert_oauth_error(stored_at.refresh(client, family), "invalid_grant")
        assert_oauth_error(family_at.refresh(client, twice), "invalid_grant")
        assert query_rows(database, "SELECT revoked_at IS NOT NULL FROM grants WHERE id = ?", (grant,))[0][0] in (1, "t")
        # A forged tag is refused, and ends nothing.
        fresh = UserAgent(family_at).tokens(client, user, scope="openid offline_access")["refresh_token"]
        parts = fresh.split(".")
        forged = ".".join([parts[0], "0", parts[2], "A" * len(parts[3])])
        assert_oauth_error(stored_at.refresh(client, forged), "invalid_grant")
        assert_tokens(family_at.refresh(client, fresh))
    finally:
        stored_node.stop()


def test_a_rotated_key_is_used_and_published_by_every_node(cluster):
    issuer, nodes, service = cluster["issuer"], cluster["nodes"], cluster["service"]
    at = [NodeProvider(issuer, node) for node in nodes]
    before = assert_tokens(at[0].post("token_endpoint", {"grant_type": "client_credentials", "scope": "api"}, client=service))
    old_kid = unverified_header(before["access_token"])["kid"]
    new_kid = cluster["cli"].rotate_keys()
    assert new_kid != old_kid
    deadline, pending = time.monotonic() + 20, set(range(3))
    while pending and time.monotonic() < deadline:
        for i in sorted(pending):
            token = assert_tokens(at[i].post("token_endpoint", {"grant_type": "client_credentials", "scope": "api"},
                                             client=service))["access_token"]
            if unverified_header(token)["kid"] == new_kid:
                pending.discard(i)
        time.sleep(0.5)
    assert not pending, f"nodes {sorted(pending)} still sign with the old key 20 s after the rotation"
    for provider in at:
        kids = {key["kid"] for key in provider.jwks()["keys"]}
        assert {old_kid, new_kid} <= kids, "every node publishes the new key and keeps the old one"
        # A token another node signed with the old key verifies against this node's JWKS.
        provider.verify_jwt(before["access_token"])


def test_a_node_killed_under_load_loses_no_answered_token(cluster, binary, workdir):
    """Nodes with `--refresh-token-reuse-interval 10s`, as docs/deployment.md advises for a
    cluster: an app whose refresh died with the node retries it with the same token and goes on,
    whether or not the dead node had committed the rotation; nobody is signed out."""
    issuer, nodes, balancer = start_cluster(binary, workdir, cluster["database"], "retrying",
                                            ("--refresh-token-reuse-interval", "10s"))
    try:
        run_kill_under_load(cluster, issuer, nodes)
    finally:
        stop_cluster(balancer, nodes)


def run_kill_under_load(cluster, issuer: str, nodes: list[TesseraServer]) -> None:
    client, user = cluster["client"], cluster["user"]
    lb = Provider(issuer)
    chains = [UserAgent(lb).tokens(client, user, scope="openid offline_access")["refresh_token"] for _ in range(8)]
    stop = threading.Event()
    answered: list[str] = list(chains)  # per chain: the last refresh token an answer handed out
    failed: dict[int, list[float]] = {}  # per chain: when a request got no answer (the client can't know its fate)
    refused: dict[int, str] = {}  # a chain the server refused: its user would be signed out
    sign_ins = {"ok": 0, "failed": 0}
    lock = threading.Lock()

    def refresh_chain(i: int) -> int:
        session, count, retrying = requests.Session(), 0, False
        while not stop.is_set() or retrying:  # a retry under way is finished
            if retrying and time.monotonic() - failed[i][0] > 20:
                refused[i] = "no answer 20 s after the first failure"
                return count
            try:
                answer = session.post(lb.endpoint("token_endpoint"), auth=(client.client_id, client.client_secret), timeout=30,
                                      data={"grant_type": "refresh_token", "refresh_token": answered[i]})
            except requests.RequestException:
                answer = None
            if answer is None or answer.status_code in (502, 503, 504):
                # The request died with the node (or was sent on a kept-alive connection to it):
                # like an app, retry the same token on a new connection after a moment.
                failed.setdefault(i, []).append(time.monotonic())
                session, retrying = requests.Session(), True
                time.sleep(0.3)
                continue
            if answer.status_code != 200:
                refused[i] = answer.text[:200]
                return count
            answered[i], retrying = answer.json()["refresh_token"], False
            count += 1
        return count

    def sign_in_loop() -> None:
        while not stop.is_set():
            try:
                result = UserAgent(lb).authorize(client, user=user, scope="openid")
                ok = result.kind == "redirect" and result.code and lb.redeem(client, result).status_code == 200
            except requests.RequestException:
                ok = False
            with lock:
                sign_ins["ok" if ok else "failed"] += 1

    with ThreadPoolExecutor(len(chains) + 2) as pool:
        refreshes = [pool.submit(refresh_chain, i) for i in range(len(chains))]
        logins = [pool.submit(sign_in_loop) for _ in range(2)]
        time.sleep(3)
        victim = nodes[1]
        killed_at = time.monotonic()
        os.kill(victim.process.pid, signal.SIGKILL)
        victim.process.wait(10)
        time.sleep(4)
        stop.set()
        done = [f.result() for f in refreshes]
        for f in logins:
            f.result()
    print(f"\ncluster under load: {sum(done)} refreshes on {len(chains)} chains, sign-ins {sign_ins}, "
          f"{sum(map(len, failed.values()))} requests without an answer on {len(failed)} chains, all retried")
    assert sum(done) > 20, f"the load ran: {done} refreshes per chain"
    assert sign_ins["ok"] > 0, sign_ins
    assert not refused, f"a retry after the kill was refused (the user signed out): {refused}"
    late = {i: [round(at - killed_at, 2) for at in times if not 0 <= at - killed_at <= 3] for i, times in failed.items()}
    assert not any(late.values()), f"only requests around the kill may go unanswered; these did seconds after it: {late}"
    # Every chain goes on: the token its last answer handed out works (checked through the balancer).
    for token in answered:
        assert_tokens(lb.refresh(client, token))
    # The balancer's other nodes keep answering.
    for _ in range(10):
        assert requests.get(issuer + "/health/ready", timeout=10).status_code == 200
        assert_tokens(lb.post("token_endpoint", {"grant_type": "client_credentials", "scope": "api"}, client=cluster["service"]))
