"""Database outages (issue 25): two `tessera serve` nodes on one PostgreSQL database, under a
load of refreshes like apps make them, while PostgreSQL goes away in the three ways it does in
production:

  a. restarted ten times (`pg_ctl restart -m fast`: every connection is cut, PostgreSQL is back
     within a second), one and a half seconds apart; the first time while a refresh waits for a
     lock the test holds, so that at least one statement is surely cut;
  b. crashed (`pg_ctl stop -m immediate`), five seconds down;
  c. stopped for thirty seconds (`pg_ctl stop -m fast`): meanwhile a third node is started (it
     must wait for the database, not exit) and a fourth one is sent SIGTERM with a request in
     flight (it must exit, not hang).

What a node promises meanwhile (the tests below, one promise each): every request gets an
answer within about the database timeout (`--database-timeout`, 5 s by default) — a token, or
503 with Retry-After and, at /token, `temporarily_unavailable` — never a 500 and never silence;
a request answered 503 leaves nothing to be done later; so an app that retries the same refresh
token (the nodes run with `--refresh-token-reuse-interval 10s`, as docs/deployment.md advises)
goes on, and nobody is signed out. Afterwards no database connection and no request is left
busy, the log names PostgreSQL's error (SQLSTATE and message) and never its password, and the
nodes stop on SIGTERM.

The scenario runs once (the `outage` fixture, about a minute and a half) and records what it
saw; each test asserts one promise on that record. It needs PostgreSQL (it runs with
E2E_POSTGRES) but never touches the suite's shared cluster: it makes a cluster of its own, with
Debian's binaries, as scripts/postgres-cluster.sh does.
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from conftest import SERVER_ENV
from e2e_support import CLI, POSTGRES, Client, Provider, TesseraServer, User, UserAgent, free_port
from test_operations import metric

pytestmark = pytest.mark.skipif(POSTGRES is None, reason="needs PostgreSQL (E2E_POSTGRES); uses a cluster of its own")

DATABASE_TIMEOUT = 5.0  # the nodes' --database-timeout: its default
APP_TIMEOUT = 20.0  # how long the apps of the load wait for an answer
RETRY_FOR = 60.0  # an app retrying for a minute without a token: its user is as good as signed out
CHAINS = 8
PASSWORD = "outage-password-0123"
PHASES = ("before", "restarts", "crash", "long outage", "after")


# ---------------------------------------------------------------------------
# A PostgreSQL cluster of the module's own


class PostgresCluster:
    """A private PostgreSQL cluster made like scripts/postgres-cluster.sh makes the shared one:
    Debian's newest binaries, a folder under /tmp owned by `postgres` when running as root
    (initdb refuses root), a free loopback port, superuser `tessera` with a random password asked
    for over TCP (scram-sha-256), fsync off. The test stops and restarts it at will.

    Unlike the shared cluster, synchronous_commit stays on: with it off, a commit is acknowledged
    before its WAL is written, and `pg_ctl stop -m immediate` (a crash) loses the last fraction of
    a second of acknowledged commits — refresh tokens the apps were handed would be gone, and the
    test would blame the server for signing them out. (fsync and full-page writes only matter when
    the machine crashes, which the test doesn't do.)"""

    def __init__(self):
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: [int(n) for n in re.findall(r"\d+", p)])
        if not found or not os.access(f"{found[-1]}/initdb", os.X_OK):
            raise RuntimeError("no PostgreSQL binaries in /usr/lib/postgresql/*/bin (scripts/test installs them)")
        self.bin = Path(found[-1])
        self.dir = Path(tempfile.mkdtemp(prefix="tessera-outage-pg.", dir="/tmp"))
        self.dir.chmod(0o755)
        self.data = self.dir / "data"
        self.password = secrets.token_hex(16)
        self.port = free_port()
        (self.dir / "password").write_text(self.password + "\n")
        if os.getuid() == 0:
            for path in (self.dir, self.dir / "password"):
                shutil.chown(path, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "tessera", f"--pwfile={self.dir / 'password'}",
                  "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--locale=C.UTF-8")
        self.options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                        "-c fsync=off -c full_page_writes=off")

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bin / tool), *args]
        if os.getuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if check and done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)} failed ({done.returncode}): {done.stderr}{done.stdout}\n"
                               f"{self.server_log()[-2000:]}")
        return done

    def server_log(self) -> str:
        try:
            return (self.dir / "server.log").read_text(errors="replace")
        except OSError:
            return ""

    def _pg_ctl(self, *args: str, check: bool = True) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"), "-w", "-t", "60", *args, check=check)

    def start(self) -> None:
        self._pg_ctl("-o", self.options, "start")

    def restart(self, mode: str = "fast") -> None:
        self._pg_ctl("-m", mode, "-o", self.options, "restart")

    def restart_cutting_a_statement(self, database: str) -> None:
        """`restart("fast")` at a moment when a node's statement is sure to be in flight: a session
        of the test's own locks `grants` against writes (a refresh rotates its family on its
        grant's row), the restart waits (at most five seconds) until a refresh of the load is
        queued behind that lock, and then cuts both."""
        # Named, so that the holder's own wait for the lock (while a node's write holds it) isn't
        # taken for a node's statement queued behind it.
        holder = subprocess.Popen([str(self.bin / "psql"), self.url(database) + "&application_name=outage-lock-holder", "-X", "-q"],
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        try:
            holder.stdin.write("BEGIN;\nLOCK TABLE grants IN EXCLUSIVE MODE;\nSELECT pg_sleep(30);\n")
            holder.stdin.flush()
            waiting = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND application_name <> 'outage-lock-holder'")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                done = subprocess.run([str(self.bin / "psql"), self.url(database), "-X", "-tAc", waiting],
                                      capture_output=True, text=True, timeout=10)
                if done.returncode == 0 and done.stdout.strip() not in ("", "0"):
                    break
                time.sleep(0.05)
            self.restart("fast")
        finally:
            holder.kill()
            holder.wait(10)

    def stop(self, mode: str) -> None:
        self._pg_ctl("-m", mode, "stop")

    def url(self, database: str) -> str:
        return f"postgres://tessera:{self.password}@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def create_database(self, name: str) -> str:
        subprocess.run([str(self.bin / "psql"), self.url("postgres"), "-X", "-qc", f'CREATE DATABASE "{name}"'],
                       capture_output=True, text=True, check=True, timeout=60)
        return self.url(name)

    def remove(self) -> None:
        self._pg_ctl("-m", "immediate", "stop", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres():
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


# ---------------------------------------------------------------------------
# Nodes, and asking them things without ever waiting forever


@dataclass
class Probe:
    """One request's fate: its status (None: no answer, `failure` says why) and what a client reads."""
    status: int | None
    seconds: float
    failure: str = ""
    retry_after: str | None = None
    error: str | None = None  # the `error` of a JSON error body
    text: str = ""

    def describe(self) -> str:
        if self.status is None:
            return f"no answer after {self.seconds:.1f} s ({self.failure})"
        return f"{self.status} after {self.seconds:.1f} s, Retry-After {self.retry_after}: {self.text[:160]!r}"


def probe(method: str, url: str, timeout: float = 15, **kwargs) -> tuple[Probe, requests.Response | None]:
    """A request on a connection of its own (no kept-alive connection to race with)."""
    started = time.monotonic()
    try:
        response = requests.request(method, url, timeout=timeout, allow_redirects=False, **kwargs)
    except requests.Timeout:
        return Probe(None, time.monotonic() - started, "timeout"), None
    except requests.RequestException as error:
        return Probe(None, time.monotonic() - started, f"connection: {type(error).__name__}: {error}"[:200]), None
    try:
        error_code = response.json().get("error") if response.status_code != 200 else None
    except (ValueError, AttributeError):
        error_code = None
    return Probe(response.status_code, time.monotonic() - started, retry_after=response.headers.get("Retry-After"),
                 error=error_code, text=response.text[:300]), response


def retry_after_seconds(value: str | None) -> int | None:
    return int(value) if value and value.strip().isdigit() else None


class Node(TesseraServer):
    """A node of the outage cluster: every node has the same issuer, a management listener of its
    own, JSON logs, and lets a rotated refresh token be presented again for 10 s (retries)."""

    def __init__(self, binary: str, database: str, workdir: Path, name: str, issuer: str | None = None,
                 port: int | None = None):
        port, management_port = port or free_port(), free_port()
        super().__init__(binary, database, workdir, port=port, env=SERVER_ENV, name=name,
                         args=["--issuer", issuer or f"http://127.0.0.1:{port}", "--metrics-port", str(management_port),
                               "--refresh-token-reuse-interval", "10s", "--log-format", "json"])
        self.management = f"http://127.0.0.1:{management_port}"
        self.url = f"http://127.0.0.1:{self.port}"
        self.token_url = self.url + "/token"  # as discovered, once node A is up

    def said_ready(self) -> bool:
        return any(line.startswith("Tessera is ready") for line in self.stdout_lines)

    def refresh(self, client: Client, token: str, timeout: float = 15) -> tuple[Probe, requests.Response | None]:
        return probe("POST", self.token_url, timeout=timeout, auth=(client.client_id, client.client_secret),
                     data={"grant_type": "refresh_token", "refresh_token": token})

    def busy(self) -> tuple[float, float] | None:
        """(database connections in use, requests being served) from its /metrics; None: no answer."""
        answer, response = probe("GET", self.management + "/metrics", timeout=5)
        if response is None or answer.status != 200:
            return None
        return (metric(response.text, "tessera_database_connections_in_use"),
                metric(response.text, "http_server_active_requests"))

    def log_records(self) -> list[dict]:
        records = []
        for line in self.log().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records

    def sigterm(self, within: float) -> tuple[int | None, float]:
        """SIGTERM; (exit code, seconds it took). Killed after `within` s: (None, within)."""
        if self.process.poll() is not None:
            return self.process.returncode, 0.0
        sent = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(within)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            return None, within
        return code, time.monotonic() - sent


# ---------------------------------------------------------------------------
# The load: apps refreshing, retrying the same token when they get no answer or a 503


@dataclass
class Answer:
    chain: int
    node: str
    phase: str
    probe: Probe


@dataclass
class Chain:
    """One app's refresh-token chain: the refresh token its last answer handed out."""
    index: int
    token: str
    timeout: float
    refreshes: int = 0
    refused: str | None = None  # a 4xx: the app's user is signed out
    gave_up: str | None = None  # no token within RETRY_FOR of the first failure


class RefreshLoad:
    """A thread per chain posting `grant_type=refresh_token` to the nodes in turn. A request
    that times out, dies, or gets a 5xx is retried like an app would: the same token, on the other
    node, after min(Retry-After, 1) s — until a 200 (or for RETRY_FOR s: the chain gave up). A
    4xx ends the chain (refused: its user is signed out). Every answer is recorded with the phase
    it was sent in; a retry under way when the load stops is finished."""

    def __init__(self, nodes: list[Node], client: Client, chains: list[Chain]):
        self.nodes, self.client, self.chains = nodes, client, chains
        self.phase = PHASES[0]
        self.answers: list[Answer] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(len(chains), thread_name_prefix="refresh")
        self._runs = []

    def start(self) -> "RefreshLoad":
        self._runs = [self._pool.submit(self._run, chain) for chain in self.chains]
        return self

    def stop(self) -> None:
        self._stop.set()
        for run in self._runs:
            run.result(timeout=RETRY_FOR + APP_TIMEOUT + 30)
        self._pool.shutdown()

    def _run(self, chain: Chain) -> None:
        turn, failing_since = chain.index, None
        while not self._stop.is_set() or failing_since is not None:
            if failing_since is not None and time.monotonic() - failing_since > RETRY_FOR:
                chain.gave_up = f"no token {RETRY_FOR:.0f} s after the first failure"
                return
            node = self.nodes[turn % len(self.nodes)]
            turn += 1  # the next request, and so a retry, goes to the other node
            phase = self.phase
            answer, response = node.refresh(self.client, chain.token, timeout=chain.timeout)
            with self._lock:
                self.answers.append(Answer(chain.index, node.name, phase, answer))
            if answer.status == 200:
                chain.token, failing_since = response.json()["refresh_token"], None
                chain.refreshes += 1
                time.sleep(0.05)
            elif answer.status is None or answer.status >= 500:
                failing_since = failing_since or time.monotonic()
                time.sleep(min(retry_after_seconds(answer.retry_after) or 1, 1))
            else:
                chain.refused = f"{answer.status} at {node.name} in phase {phase}: {answer.text[:200]}"
                return


# ---------------------------------------------------------------------------
# The scenario, run once


@dataclass(repr=False)
class Outage:
    """What the scenario saw; the tests read it."""
    postgres: PostgresCluster
    client: Client
    nodes: dict[str, Node]
    load: RefreshLoad | None = None
    final_refreshes: dict[str, Probe] = field(default_factory=dict)  # each chain's last token, refreshed at the end
    started_down: dict = field(default_factory=dict)  # node C while the database is down
    started_back: dict = field(default_factory=dict)  # node C once it is back
    stopped_down: dict = field(default_factory=dict)  # node D: SIGTERM during the outage
    busy_after: dict[str, tuple | None] = field(default_factory=dict)  # A, B: (connections, requests) after the load
    exits: dict[str, tuple[int | None, float]] = field(default_factory=dict)  # A, B: SIGTERM at the end

    def log_tail(self, name: str, lines: int = 12) -> str:
        """The last lines of a node's log that aren't routine (info and below), shortened."""
        routine = ('"level":"trace"', '"level":"debug"', '"level":"info"', '"level":"notice"')
        notable = [line for line in self.nodes[name].log().splitlines() if not any(level in line for level in routine)]
        return "\n".join(line[:400] for line in notable[-lines:])


def wait_until(condition, timeout: float, every: float = 0.25) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(every)


@pytest.fixture(scope="module")
def outage(binary, workdir, postgres):
    """The scenario: nodes A, B (under the load) and D (idle) on a new database, 8 chains
    refreshing through the phases, then the load stopped and what is left looked at: the nodes'
    busy connections and requests, whether each chain's token still refreshes, how A and B stop."""
    database = postgres.create_database("outage")
    cli = CLI(binary, database, workdir)  # shares the suite's TESSERA_MASTER_KEY with the nodes
    registration = cli.add_client("Outage App", redirect_uris=["http://127.0.0.1:9/outage-callback"], first_party=True,
                                  grant_types=["authorization_code", "refresh_token"], scopes=["openid", "offline_access"])
    client = Client(registration["client_id"], registration["client_secret"], registration["redirect_uris"], registration)
    user = cli.add_user("outage@example.com", PASSWORD)
    a_port = free_port()
    issuer = f"http://127.0.0.1:{a_port}"
    nodes = {name: Node(binary, database, workdir, f"outage-{name}", issuer, a_port if name == "A" else None)
             for name in ("A", "B", "C", "D")}
    seen = Outage(postgres, client, nodes)
    try:
        for name in ("A", "B", "D"):
            nodes[name].start()
        provider = Provider(issuer)  # node A
        for node in nodes.values():
            node.token_url = node.url + urlsplit(provider.endpoint("token_endpoint")).path
        agent, person = UserAgent(provider), User(user["id"], user["email"], PASSWORD, None)
        tokens = [agent.tokens(client, person, scope="openid offline_access")["refresh_token"] for _ in range(CHAINS + 2)]
        spare_c, spare_d = tokens.pop(), tokens.pop()
        chains = [Chain(i, token, APP_TIMEOUT) for i, token in enumerate(tokens[:CHAINS])]
        seen.load = load = RefreshLoad([nodes["A"], nodes["B"]], client, chains).start()
        try:
            time.sleep(3)
            load.phase = "restarts"  # a.
            postgres.restart_cutting_a_statement("outage")
            time.sleep(1.5)
            for _ in range(9):
                postgres.restart("fast")
                time.sleep(1.5)
            time.sleep(1.5)
            load.phase = "crash"  # b.
            postgres.stop("immediate")
            time.sleep(5)
            postgres.start()
            time.sleep(3)
            load.phase = "long outage"  # c.
            long_outage(seen, spare_c, spare_d)
            time.sleep(2)
            load.phase = "after"
            time.sleep(3)
        finally:
            load.stop()
        # Whatever was under way is over: nothing may stay busy (polled: the last answers may
        # still be on their way out).
        under_load = {name: nodes[name] for name in ("A", "B")}
        wait_until(lambda: all(node.busy() == (0, 0) for node in under_load.values()), 10)
        seen.busy_after = {name: node.busy() for name, node in under_load.items()}
        for chain in chains:
            seen.final_refreshes[f"chain {chain.index}"] = nodes["A"].refresh(client, chain.token)[0]
        seen.final_refreshes["node D's interrupted request"] = nodes["A"].refresh(client, spare_d)[0]
        seen.exits = {name: node.sigterm(15) for name, node in under_load.items()}
        print_summary(seen)
        yield seen
    finally:
        for node in nodes.values():
            node.stop()


def long_outage(seen: Outage, spare_c: str, spare_d: str) -> None:
    """Phase c: PostgreSQL stopped (fast) for 30 s. Meanwhile node C is started and looked at while
    it waits, and node D, idle so far, is sent a refresh and SIGTERM a second later (both at once,
    so that neither, hanging, can stretch the outage)."""
    postgres, c, d, client = seen.postgres, seen.nodes["C"], seen.nodes["D"], seen.client
    postgres.stop("fast")
    down_at = time.monotonic()
    c.start(wait=False)
    with ThreadPoolExecutor(8) as pool:
        stopping = pool.submit(sigterm_with_a_request_in_flight, d, client, spare_d)
        # Long enough for node C to have tried the database and said so.
        wait_until(lambda: c.process.poll() is not None or "waiting for the database" in c.log(), 8)
        looks = {
            "live": (c.url + "/health/live", None), "live_management": (c.management + "/health/live", None),
            "ready": (c.url + "/health/ready", None), "ready_management": (c.management + "/health/ready", None),
            "discovery": (c.url + "/.well-known/openid-configuration", None),
            "token": (c.token_url, {"grant_type": "refresh_token", "refresh_token": "not-a-refresh-token"}),
        }
        answers = {key: pool.submit(probe, "POST" if form else "GET", url, DATABASE_TIMEOUT + 5, data=form,
                                    auth=(client.client_id, client.client_secret) if form else None)
                   for key, (url, form) in looks.items()}
        seen.started_down = {key: answer.result()[0] for key, answer in answers.items()}
        # A browser sent there meanwhile gets a page (styled: the stylesheet needs no database).
        seen.started_down["page"] = probe("GET", c.url + "/authorize?client_id=x", 10, headers={"Accept": "text/html"})[0]
        seen.started_down["stylesheet"] = probe("GET", c.url + "/assets/tessera.css", 10)[0]
        seen.started_down.update(exit=c.process.poll(), said_ready=c.said_ready(),
                                 warnings=[r for r in c.log_records() if "waiting for the database" in r.get("message", "")])
        seen.stopped_down = stopping.result()
    time.sleep(max(0.0, down_at + 30 - time.monotonic()))
    postgres.start()
    back_at = time.monotonic()
    ready = wait_until(lambda: c.process.poll() is not None or c.said_ready(), 15)
    seen.started_back = {
        "exit": c.process.poll(),
        "ready_after": time.monotonic() - back_at if ready and c.said_ready() else None,
        "ready_management": probe("GET", c.management + "/health/ready")[0],
        "refresh": c.refresh(client, spare_c)[0],
    }
    c.stop()


def sigterm_with_a_request_in_flight(node: Node, client: Client, token: str) -> dict:
    """A refresh sent to the node, SIGTERM a second later: how the node exited, what the request got."""
    with ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(node.refresh, client, token, 40)
        time.sleep(1)
        code, seconds = node.sigterm(DATABASE_TIMEOUT + 10)
        return {"exit": code, "seconds": seconds, "request": in_flight.result()[0]}


def print_summary(seen: Outage) -> None:
    answers = seen.load.answers
    unavailable = {phase: sum(a.phase == phase and a.probe.status == 503 for a in answers) for phase in PHASES}
    others = Counter(a.probe.status or a.probe.failure.split(":")[0] for a in answers if a.probe.status not in (200, 503))
    slowest = max((a.probe.seconds for a in answers if a.probe.status is not None), default=0)
    ready = seen.started_back.get("ready_after")
    print(f"\ndatabase outages under load: {sum(c.refreshes for c in seen.load.chains)} refreshes on {len(seen.load.chains)} "
          f"chains, 503s per phase {unavailable}, other outcomes {dict(others)}, slowest answer {slowest:.1f} s; "
          f"node D exit {seen.stopped_down.get('exit')} after {seen.stopped_down.get('seconds', 0):.1f} s "
          f"(its request: {seen.stopped_down['request'].describe()[:60] if seen.stopped_down else None}); "
          f"node C ready {'never' if ready is None else f'{ready:.1f} s'} after the database")


# ---------------------------------------------------------------------------
# The promises


def examples(answers: list[Answer], n: int = 5) -> str:
    return "; ".join(f"chain {a.chain} at {a.node} ({a.phase}): {a.probe.describe()}" for a in answers[:n])


def test_every_answer_is_a_token_or_a_503_to_retry(outage):
    """While PostgreSQL restarts, crashes or is away, a request is answered with a token
    or with 503 + Retry-After (integer seconds) + `temporarily_unavailable`: the app knows to
    come back. A 500 would read as a bug, another 4xx/5xx as a refusal."""
    answered = [a for a in outage.load.answers if a.probe.status is not None]
    others = [a for a in answered if a.probe.status not in (200, 503)]
    assert not others, (f"{len(others)} of {len(answered)} answers were neither 200 nor 503 "
                        f"({dict(Counter((a.probe.status, a.probe.error) for a in others))}), e.g. {examples(others)}")
    unavailable = [a for a in answered if a.probe.status == 503]
    no_retry_after = [a for a in unavailable if retry_after_seconds(a.probe.retry_after) is None]
    assert not no_retry_after, \
        f"{len(no_retry_after)} of {len(unavailable)} 503s lack an integer Retry-After: {examples(no_retry_after)}"
    not_oauth = [a for a in unavailable if a.probe.error != "temporarily_unavailable"]
    assert not not_oauth, \
        f"{len(not_oauth)} of {len(unavailable)} 503s from /token aren't temporarily_unavailable: {examples(not_oauth)}"


def test_no_request_hangs(outage):
    """Every request of the apps that wait 20 s was answered, within the database timeout
    plus a margin: a request waiting for a connection gives up after the database timeout, one
    whose connection broke is answered at once."""
    patient = [a for a in outage.load.answers if outage.load.chains[a.chain].timeout == APP_TIMEOUT]
    unanswered = [a for a in patient if a.probe.status is None]
    assert not unanswered, (f"{len(unanswered)} of {len(patient)} requests got no answer "
                            f"({dict(Counter((a.phase, a.probe.failure[:40]) for a in unanswered))}), "
                            f"e.g. {examples(unanswered)}")
    slow = [a for a in patient if a.probe.seconds > DATABASE_TIMEOUT + 5]
    assert not slow, f"{len(slow)} of {len(patient)} answers took over {DATABASE_TIMEOUT + 5:.0f} s: {examples(slow)}"


def test_nobody_is_signed_out(outage):
    """Every app goes on through all three outages — retrying a refresh that got no
    answer or a 503 with the same token works: a request that waited for the database is answered
    503 at the database timeout and never runs afterwards, so the retry, 30 s later, is not taken
    for a replay (the apps wait 20 s, longer than the database timeout: a request its client
    abandoned sooner may still run until the timeout, docs/deployment.md) — and the refresh token
    each chain holds at the end still refreshes (no family was revoked). The token
    of node D's interrupted request was not spent either: nothing of a 503 is done later."""
    chains = outage.load.chains
    refused = {c.index: c.refused for c in chains if c.refused}
    assert not refused, f"{len(refused)} of {len(chains)} chains were refused (signed out): {refused}"
    gave_up = {c.index: c.gave_up for c in chains if c.gave_up}
    assert not gave_up, f"{len(gave_up)} of {len(chains)} chains got no token for a minute: {gave_up}"
    dead = {i: p.describe() for i, p in outage.final_refreshes.items() if p.status != 200}
    assert not dead, f"{len(dead)} of {len(outage.final_refreshes)} refresh tokens no longer refresh after the outages: {dead}"
    per_phase = Counter(a.phase for a in outage.load.answers if a.probe.status == 200)
    total = sum(c.refreshes for c in chains)
    assert total > 50 and all(per_phase[p] for p in PHASES), f"the load ran: {total} refreshes, per phase {dict(per_phase)}"


def test_nothing_stays_busy_after_the_load(outage):
    """Once the load has stopped, no node holds a database connection or a request: no
    request is stuck waiting for a connection that will never come, none leaked its connection."""
    for name, busy in outage.busy_after.items():
        assert busy is not None, f"node {name}'s /metrics didn't answer"
        connections, requests_ = busy
        assert connections == 0, f"node {name}: {connections:.0f} database connections still in use 10 s after the load"
        assert requests_ == 0, f"node {name}: {requests_:.0f} requests still being served 10 s after the load"


def test_a_node_started_while_the_database_is_down_waits_for_it(outage):
    """A node (C) started during the outage doesn't exit: it says in its log that it is
    waiting for the database, is live but not ready (the reason on the management listener),
    answers other requests 503 + Retry-After, and says `Tessera is ready` only once PostgreSQL is
    back — by itself, within seconds — and then serves refreshes."""
    down, back = outage.started_down, outage.started_back
    tail = outage.log_tail("C")
    assert down["exit"] is None, f"node C exited with {down['exit']} while the database was down:\n{tail}"
    assert [r for r in down["warnings"] if r.get("level") == "warning"], \
        f"node C logged no warning 'waiting for the database':\n{tail}"
    assert not down["said_ready"], "node C said 'Tessera is ready' while the database was down"
    for key in ("live", "live_management"):
        assert down[key].status == 200, f"{key}: {down[key].describe()}"
    assert down["ready"].status == 503, f"public /health/ready: {down['ready'].describe()}"
    management = down["ready_management"]
    assert management.status == 503 and management.text.startswith("unavailable: ") \
        and "waiting for the database" in management.text, f"management /health/ready: {management.describe()}"
    for key in ("token", "discovery"):
        assert down[key].status == 503 and retry_after_seconds(down[key].retry_after) is not None, \
            f"{key} while waiting: {down[key].describe()}"
    assert down["token"].error == "temporarily_unavailable", down["token"].describe()
    assert down["page"].status == 503 and "Temporarily unavailable" in down["page"].text, down["page"].describe()
    assert down["stylesheet"].status == 200, down["stylesheet"].describe()
    assert back["exit"] is None, f"node C exited with {back['exit']} after the database came back:\n{tail}"
    assert back["ready_after"] is not None and back["ready_after"] <= 15, \
        f"node C didn't say 'Tessera is ready' within 15 s of the database's return:\n{tail}"
    assert back["ready_management"].status == 200, back["ready_management"].describe()
    assert back["refresh"].status == 200, f"node C's first refresh: {back['refresh'].describe()}"


def test_sigterm_during_the_outage_exits(outage):
    """SIGTERM while the database is down and a request is in flight:
    the request is answered 503 (or at worst its connection closed), and the process exits 0
    within the database timeout plus 10 s instead of waiting forever for the database."""
    stopped = outage.stopped_down
    tail = outage.log_tail("D")
    request = stopped["request"]
    assert stopped["exit"] is not None, (f"node D still ran {DATABASE_TIMEOUT + 10:.0f} s after SIGTERM (killed); its "
                                         f"request in flight: {request.describe()}:\n{tail}")
    assert stopped["exit"] == 0, f"node D exited with {stopped['exit']}; its request in flight: {request.describe()}:\n{tail}"
    assert request.status == 503 or (request.status is None and request.failure.startswith("connection")), \
        f"node D's request in flight: {request.describe()}"
    if request.status == 503:
        assert request.error == "temporarily_unavailable" and retry_after_seconds(request.retry_after) is not None, \
            request.describe()


def test_logs_name_the_database_error_and_never_its_password(outage):
    """The operator reads in the log why requests failed, at warning or error level: PostgreSQL's
    SQLSTATE 57P01 (admin_shutdown) with its message, from the statements `pg_ctl restart -m fast`
    cut (on either node: the first restart comes while a refresh waits for a lock the test holds,
    later ones cut what chance has in flight); on both
    nodes, each failed attempt of the pool to connect, and requests that got no connection in
    time say why (the last attempt's error). The database password never appears."""
    loud = {name: [json.dumps(r) for r in outage.nodes[name].log_records() if r.get("level") in ("warning", "error", "critical")]
            for name in ("A", "B")}
    for name, lines in loud.items():
        assert lines, f"node {name} logged no warning in JSON"
        assert any('"Connection creation failed"' in line for line in lines), \
            f"node {name}: the pool's failed attempts to connect are not warnings: {lines[:3]}"
        assert any("no connection within" in line and "the last attempt to connect failed" in line for line in lines), \
            f"node {name}: no request that waited in vain says why: {lines[:3]}"
    admin_shutdown = [line for lines in loud.values() for line in lines if "57P01" in line]
    assert admin_shutdown, f"no warning or error names SQLSTATE 57P01, e.g. {loud['A'][:3]}"
    assert any("terminating connection due to administrator command" in line for line in admin_shutdown), \
        f"57P01 without PostgreSQL's message: {admin_shutdown[:3]}"
    for name, node in outage.nodes.items():
        assert outage.postgres.password not in node.log() + "".join(node.stdout_lines), \
            f"node {name} logged the database password"


def test_nodes_stop_on_sigterm_after_the_outages(outage):
    """The nodes that went through the outages still stop cleanly (code 0) within 15 s of SIGTERM."""
    for name, (code, seconds) in outage.exits.items():
        assert code is not None, f"node {name} was still running 15 s after SIGTERM (killed):\n{outage.log_tail(name)}"
        assert code == 0, f"node {name} exited with {code} after {seconds:.1f} s:\n{outage.log_tail(name)}"
