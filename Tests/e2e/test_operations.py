"""What operators run a node by (issue 14): `/health/live` says the process is up,
`/health/ready` whether it should be sent requests — 503 with the reason while its database
can't be reached, 200 again as soon as it can; throttles counted by every node together;
`/metrics` on a listener of its own; JSON logs with request ids and nothing secret."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from e2e_support import (CLI, POSTGRES, Client, Provider, TesseraServer, User, UserAgent, assert_tokens, free_port, new_database,
                         query_rows)


def test_live_and_ready(server):
    for path, body in (("/health", "ok"), ("/health/live", "ok"), ("/health/ready", "ready")):
        answer = requests.get(server.issuer + path, timeout=10)
        assert answer.status_code == 200, (path, answer.text)
        assert answer.text.strip() == body
        assert answer.headers["Cache-Control"] == "no-store"


def test_rs256_signs_through_openssl_only_where_the_cpu_makes_it_faster(server):
    """OpenSSL's RSA code for AVX-512 IFMA signs ≈ 2.3 times as fast as swift-crypto's; without
    IFMA both are as fast, and the node leaves libcrypto unloaded (≈ 4 MiB it would touch)."""
    if os.environ.get("TESSERA_RSA_ENGINE"):
        pytest.skip("TESSERA_RSA_ENGINE chooses the engine here")
    flags = next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("flags")), [])
    openssl = "avx512ifma" in flags and any(Path(d, "libcrypto.so.3").exists()
                                            for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"))
    ready = next(line for line in server.stdout_lines if line.startswith("Tessera is ready"))
    engine = re.search(r"signing RS256 \(([^)]*)\)", ready)
    assert engine, ready
    mapped = Path(f"/proc/{server.process.pid}/maps").read_text()
    if openssl:
        assert engine.group(1).startswith("OpenSSL 3"), ready
        assert "libcrypto.so.3" in mapped
    else:
        assert engine.group(1) == "swift-crypto", ready
        assert "libcrypto.so" not in mapped


def test_the_release_binary_carries_swifts_libraries_and_runs_tasks_on_its_event_loops(server):
    """scripts/build-release links the Swift runtime and Foundation into the binary (an idle node
    maps ≈ 10 MiB less, and no toolchain is needed where it runs); the event loops still take over
    Swift's global executor, through a hook the linker resolves (SwiftNIO's lookup by name finds
    nothing in such a binary, and tasks then ran on a pool of threads of their own, slower)."""
    if os.environ.get("TESSERA_DYNAMIC_SWIFT"):
        pytest.skip("TESSERA_DYNAMIC_SWIFT keeps the binary linked to the toolchain's shared libraries")
    mapped = Path(f"/proc/{server.process.pid}/maps").read_text()
    for library in ("libswiftCore.so", "libFoundation.so", "libFoundationEssentials.so", "libdispatch.so"):
        assert library not in mapped, library
    assert requests.get(server.issuer + "/health/ready", timeout=10).status_code == 200
    assert "tasks stay on Swift's own thread pool" not in server.log()


def psql(url: str, sql: str) -> str:
    return subprocess.run(["psql", url, "-X", "-tAc", sql], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(POSTGRES is None, reason="needs a PostgreSQL server (E2E_POSTGRES) to take away")
def test_ready_says_503_while_the_database_is_away(binary, workdir):
    database = new_database(workdir, "readiness")
    name = database.rsplit("/", 1)[1].split("?", 1)[0]
    management = free_port()
    node = TesseraServer(binary, database, workdir, name="readiness", args=["--metrics-port", str(management)]).start()
    try:
        assert requests.get(node.issuer + "/health/ready", timeout=10).status_code == 200
        # The database refuses new connections and drops the node's open ones.
        psql(POSTGRES, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        psql(POSTGRES, f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        # The public listener says only that the node is not ready: the database's error (its
        # host, its user) is for the operator, on the management listener.
        public = requests.get(node.issuer + "/health/ready", timeout=30)
        assert public.status_code == 503 and public.text.strip() == "unavailable", public.text
        answer = requests.get(f"http://127.0.0.1:{management}/health/ready", timeout=30)
        assert answer.status_code == 503, answer.text
        assert answer.text.startswith("unavailable: database: "), answer.text
        # PostgreSQL's own reason: the refusal, or (when the check met a pooled connection the
        # termination was reaching) the termination itself, or (a new connection whose backend
        # the termination reached while it started) the reset socket; or the check's deadline.
        reasons = ("not currently accepting connections", "terminating connection due to administrator command",
                   "can't connect: Connection reset by peer", "no answer within")
        assert any(reason in answer.text for reason in reasons), answer.text
        assert requests.get(node.issuer + "/health/live", timeout=10).status_code == 200, "the process is still up"
        psql(POSTGRES, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        deadline, status = time.monotonic() + 30, 503
        while time.monotonic() < deadline and status != 200:
            time.sleep(0.5)
            status = requests.get(node.issuer + "/health/ready", timeout=30).status_code
        assert status == 200, "ready again once the database is back"
    finally:
        psql(POSTGRES, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        node.stop()


def test_wrong_passwords_are_counted_across_nodes(binary, workdir):
    """Two nodes on one database: guesses spread over both count together, so an attacker who
    round-robins gets no more than five."""
    from test_security import OWNER_PASSWORD, password_login
    database = new_database(workdir, "two-nodes-throttle")
    CLI(binary, database, workdir).add_user("shared@example.com", OWNER_PASSWORD)
    nodes = [TesseraServer(binary, database, workdir, name=f"throttle-node-{i}", args=["--trusted-proxy", "127.0.0.1"]).start()
             for i in range(2)]
    try:
        for attempt in range(5):
            answer = password_login(nodes[attempt % 2].issuer, "shared@example.com", "a guess", "198.51.100.9")
            assert answer.status_code == 401, answer.text
        for node in nodes:
            refused = password_login(node.issuer, "shared@example.com", OWNER_PASSWORD, "198.51.100.9")
            assert refused.status_code == 429, f"{node.name} let a sixth attempt through"
        assert password_login(nodes[1].issuer, "shared@example.com", OWNER_PASSWORD, "203.0.113.8").status_code == 303
    finally:
        for node in nodes:
            node.stop()


# ---------------------------------------------------------------------------
# Metrics on a listener of their own, and JSON logs with request ids

OPS_SECRET = "ops-client-secret-0123456789-abcdefghij"
OPS_PASSWORD = "ops-password-0123456789"


@pytest.fixture(scope="module")
def observed(binary, workdir):
    """A server with a management listener and JSON logs at debug, a first-party app and a user."""
    database = new_database(workdir, "observed")
    cli = CLI(binary, database, workdir)
    registration = cli.add_client("Observed App", redirect_uris=["http://127.0.0.1:9/cb"], first_party=True, secret=OPS_SECRET,
                                  grant_types=["authorization_code", "refresh_token"], scopes=["openid", "offline_access"])
    user = cli.add_user("observed@example.com", OPS_PASSWORD)
    metrics_port = free_port()
    server = TesseraServer(binary, database, workdir, name="observed",
                           args=["--metrics-port", str(metrics_port), "--log-format", "json", "--log-level", "debug"]).start()
    yield {"server": server, "metrics": f"http://127.0.0.1:{metrics_port}",
           "client": Client(registration["client_id"], OPS_SECRET, registration["redirect_uris"], registration),
           "user": User(user["id"], user["email"], OPS_PASSWORD, None)}
    server.stop()


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of `name` with these labels in the Prometheus text `text` (0 when none)."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        sample, _, value = line.rpartition(" ")
        sample_name, _, label_text = sample.partition("{")
        if sample_name != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', label_text))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(value)
    return total


def test_metrics_count_requests_sign_ins_tokens_and_reuse(observed):
    server, client, user = observed["server"], observed["client"], observed["user"]
    provider = Provider(server.issuer)
    assert requests.get(server.issuer + "/metrics", timeout=10).status_code == 404, "metrics are not on the public port"
    before = requests.get(observed["metrics"] + "/metrics", timeout=10).text
    agent = UserAgent(provider)
    wrong = agent.authorize(client, user=User(user.id, user.email, "not the password", None), scope="openid offline_access")
    assert wrong.kind == "login"
    tokens = agent.tokens(client, user, scope="openid offline_access")
    assert_tokens(provider.refresh(client, tokens["refresh_token"]))
    assert provider.refresh(client, tokens["refresh_token"]).status_code == 400, "a reused refresh token"
    answer = requests.get(observed["metrics"] + "/metrics", timeout=10)
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    after = answer.text

    def grew(name: str, by: float = 1, **labels: str) -> None:
        assert metric(after, name, **labels) - metric(before, name, **labels) >= by, (name, labels)

    grew("tessera_sign_ins_total", method="password", result="success")
    grew("tessera_sign_ins_total", method="password", result="failure")
    grew("tessera_token_responses_total", grant_type="authorization_code")
    grew("tessera_token_responses_total", grant_type="refresh_token")
    grew("tessera_refresh_token_reuse_total")
    grew("hb_requests", http_route="/token", http_response_status_code="200", by=2)
    grew("hb_requests", http_route="/token", http_response_status_code="400")
    assert metric(after, "http_server_request_duration_count", http_route="/token") >= 3
    assert metric(after, "tessera_database_seconds_count", operation="transaction") > 0
    assert "tessera_database_connections_in_use" in after
    deadline = time.monotonic() + 15
    while "tessera_outbox_depth" not in after and time.monotonic() < deadline:
        time.sleep(1)
        after = requests.get(observed["metrics"] + "/metrics", timeout=10).text
    assert "tessera_outbox_depth" in after, "the outbox depth is sampled every few seconds"
    for path, body in (("/health/live", "ok"), ("/health/ready", "ready")):
        assert requests.get(observed["metrics"] + path, timeout=10).text.strip() == body


def test_json_logs_carry_request_ids_and_never_a_secret(observed):
    server, client, user = observed["server"], observed["client"], observed["user"]
    provider = Provider(server.issuer)
    start = server.log_size()
    tokens = UserAgent(provider).tokens(client, user, scope="openid offline_access")
    refreshed = provider.refresh(client, tokens["refresh_token"])
    request_id = refreshed.headers["X-Request-Id"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{16}", request_id), request_id
    given = requests.get(server.issuer + "/health", headers={"X-Request-Id": "lb-7f3a9c21-0001"}, timeout=10)
    assert given.headers["X-Request-Id"] == "lb-7f3a9c21-0001", "a plain id from the proxy in front is kept"
    hostile = requests.get(server.issuer + "/health", headers={"X-Request-Id": "x\" injected"}, timeout=10)
    assert hostile.headers["X-Request-Id"] != "x\" injected"
    time.sleep(0.5)
    lines = server.log()[start:].splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    assert records and all({"time", "level", "logger", "message"} <= set(r) for r in records), lines[:3]
    mine = [r for r in records if r.get("request_id") == request_id]
    assert any(r["message"] == "request" and r["path"] == "/token" and r["status"] == "200" for r in mine), mine
    assert any(r.get("request_id") == "lb-7f3a9c21-0001" for r in records)
    text = "\n".join(lines)
    for secret in (OPS_SECRET, OPS_PASSWORD, tokens["refresh_token"], tokens["access_token"], tokens["id_token"],
                   refreshed.json()["refresh_token"]):
        assert secret not in text, "a secret reached the log"
    assert "code=" not in text and "?" not in "".join(r.get("path", "") for r in records), "no query string is logged"


def test_a_stopped_node_finishes_the_requests_under_way(binary, workdir):
    """SIGTERM (what systemd and orchestrators send) while a sign-in is being checked: the
    answer still comes, then the process exits cleanly and takes no new connection."""
    from e2e_support import parse_page
    database = new_database(workdir, "draining")
    CLI(binary, database, workdir).add_user("drain@example.com", OPS_PASSWORD)
    node = TesseraServer(binary, database, workdir, name="draining").start()
    browser = requests.Session()
    form = parse_page(browser.get(node.issuer + "/account", timeout=10).text).form("/account/login")
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(browser.post, node.issuer + "/account/login",
                              data={**form.fields, "email": "drain@example.com", "password": OPS_PASSWORD},
                              allow_redirects=False, timeout=60)
        time.sleep(0.3)  # the password check (scrypt) is under way
        node.process.send_signal(signal.SIGTERM)
        answer = pending.result(timeout=60)
    assert answer.status_code == 303, answer.text[:300]
    assert node.process.wait(30) == 0, node.log()[-2000:]
    with pytest.raises(requests.ConnectionError):
        requests.get(node.issuer + "/health/live", timeout=5)
    node.stop()


def test_a_node_stops_at_once_in_the_middle_of_a_purge(binary, workdir):
    """SIGTERM while the hourly purge works through a backlog (rows that expired while nobody
    purged them, as after an import or a long stop): the purge stops between two batches and the
    node exits cleanly within seconds, where it used to hold its stop for `shutdown-timeout`
    (25 s) and then cancel. What it didn't delete is left for the next purge."""
    database = new_database(workdir, "purging")
    CLI(binary, database, workdir).add_user("purging@example.com", OPS_PASSWORD)  # creates and migrates it
    generator = Path(__file__).resolve().parents[2] / "benchmarks" / "generate_database.py"
    where = ["--database", str(database)] if isinstance(database, Path) else ["--postgres", database]
    # 30,000 grants with a token each in a row of its own (as an earlier release kept them), all
    # expired: 60,000 rows, a purge of many seconds (at most 250 rows a batch, and a rest after each).
    filled = subprocess.run([sys.executable, str(generator), *where, "--users", "200", "--grants", "30000",
                             "--stored-refresh-tokens", "--expired-share", "1", "--purge-due", "--cache-mib", "64"],
                            capture_output=True, text=True, timeout=300)
    assert filled.returncode == 0, filled.stderr[-2000:]

    def tokens() -> int:
        return int(query_rows(database, "SELECT count(*) FROM refresh_tokens")[0][0])

    before = tokens()
    assert before >= 30_000
    node = TesseraServer(binary, database, workdir, name="purging").start()
    try:
        deadline = time.monotonic() + 60  # the first maintenance round comes 5 s after the start
        while tokens() == before:
            assert time.monotonic() < deadline and node.process.poll() is None, f"the purge never began:\n{node.log()[-2000:]}"
            time.sleep(0.1)
        sent = time.monotonic()
        node.process.send_signal(signal.SIGTERM)
        code = node.process.wait(40)
        took = time.monotonic() - sent
    finally:
        node.stop()
    left = tokens()
    assert code == 0, node.log()[-2000:]
    assert took < 5, f"the node took {took:.1f} s to stop in the middle of a purge:\n{node.log()[-2000:]}"
    assert 0 < left < before, f"the purge was to be under way when the node stopped: {before} tokens before, {left} after"
    assert "maintenance failed" not in node.log()


def test_audit_events_record_sign_ins_and_changes(observed, binary, workdir):
    """The audit trail in the database, read with `tessera audit`: sign-ins that worked and that
    failed (with the client's address), consent withdrawn, an administrator's change."""
    server, client, user = observed["server"], observed["client"], observed["user"]
    cli = CLI(binary, server.database, workdir)
    agent = UserAgent(Provider(server.issuer))
    assert agent.authorize(client, user=User(user.id, user.email, "a wrong guess", None), scope="openid").kind == "login"
    agent.tokens(client, user, scope="openid")
    profile = workdir / "observed-profile.json"
    profile.write_text(json.dumps({"name": "Observed Person"}))
    cli.run("users", "update", user.email, "--profile", str(profile))
    events = [json.loads(line) for line in cli.run("audit", "--user", user.email, "--json").splitlines()]
    kinds = [e["kind"] for e in events]
    assert "sign_in_failed" in kinds and "sign_in" in kinds and "user_changed" in kinds, kinds
    failed = next(e for e in events if e["kind"] == "sign_in_failed")
    assert failed["ip"] == "127.0.0.1" and failed["detail"] == "password" and failed["email"] == user.email, failed
    changed = next(e for e in events if e["kind"] == "user_changed")
    assert changed["actor"] == "admin" and "name" in changed["detail"], changed
    assert events == sorted(events, key=lambda e: -e["at"]), "newest first"
    assert all(OPS_PASSWORD not in json.dumps(e) and "a wrong guess" not in json.dumps(e) for e in events)
    text = cli.run("audit", "--kind", "sign_in", "--limit", "1")
    assert text.count("\n") == 1 and "sign_in  by user" in text, text
    refused = subprocess.run([binary, "audit", "--kind", "nonsense", "--database", str(server.database)], cwd=workdir,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--kind must be one of" in refused.stderr, refused.stderr
