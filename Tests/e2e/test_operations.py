"""What operators run a node by (issue 14): `/health/live` says the process is up,
`/health/ready` whether it should be sent requests — 503 with the reason while its database
can't be reached, 200 again as soon as it can."""

from __future__ import annotations

import subprocess
import time

import pytest
import requests

from e2e_support import CLI, POSTGRES, TesseraServer, new_database


def test_live_and_ready(server):
    for path, body in (("/health", "ok"), ("/health/live", "ok"), ("/health/ready", "ready")):
        answer = requests.get(server.issuer + path, timeout=10)
        assert answer.status_code == 200, (path, answer.text)
        assert answer.text.strip() == body
        assert answer.headers["Cache-Control"] == "no-store"


def psql(url: str, sql: str) -> str:
    return subprocess.run(["psql", url, "-X", "-tAc", sql], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(POSTGRES is None, reason="needs a PostgreSQL server (E2E_POSTGRES) to take away")
def test_ready_says_503_while_the_database_is_away(binary, workdir):
    database = new_database(workdir, "readiness")
    name = database.rsplit("/", 1)[1].split("?", 1)[0]
    node = TesseraServer(binary, database, workdir, name="readiness").start()
    try:
        assert requests.get(node.issuer + "/health/ready", timeout=10).status_code == 200
        # The database refuses new connections and drops the node's open ones.
        psql(POSTGRES, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        psql(POSTGRES, f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'")
        answer = requests.get(node.issuer + "/health/ready", timeout=30)
        assert answer.status_code == 503, answer.text
        assert answer.text.startswith("unavailable: database: "), answer.text
        assert "not currently accepting connections" in answer.text or "no answer within" in answer.text, answer.text
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
