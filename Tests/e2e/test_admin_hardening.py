"""The admin API and user import attacked as an outsider would (issue 24), against the binary
under test (the release build in scripts/test): each test replays one attack that once worked
and must now be refused.

- Rotating a client secret again and again: the release binary died of a lock unlocked on
  another thread than the one that took it (SIGILL) on the second to fourth call.
- Imported password hashes whose cost is far above the server's own: each wrong guess would
  hold a hashing thread for seconds and gigabytes.
- An import row with an unverified address taking over the account whose owner proved it.
- An import row disabling an account while its sessions and tokens live on.
- A third-party client allowed `tessera:admin`; the CLI sending the admin secret over plain http.

The server and its administrator are test_admin_api.py's fixture (a server of this module's own)."""

from __future__ import annotations

import json
import os
import subprocess

import bcrypt
import pytest

from e2e_support import Client, User, assert_oauth_error, assert_tokens, random_token
from test_admin_api import PASSWORD, admin, call, new_user, problem, run_cli, signs_in, user_agent_tokens  # noqa: F401 (fixture)


def import_rows(admin, rows: list[dict]) -> dict:
    answer = call(admin, "POST", "/users/import", json={"format": "jsonl", "data": "\n".join(json.dumps(r) for r in rows)})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_rotating_a_secret_many_times_keeps_the_server_up(admin):
    body = call(admin, "POST", "/clients", json={"client_name": "Rotated Often", "grant_types": ["client_credentials"],
                                                 "scope": "api"}).json()
    for attempt in range(30):
        rotated = call(admin, "POST", f"/clients/{body['client_id']}/secret", json={"grace_period": 2591999})
        assert rotated.status_code == 200, (attempt, rotated.status_code, rotated.text)
    client = Client(body["client_id"], rotated.json()["client_secret"], [], body)
    assert_tokens(admin["provider"].post("token_endpoint", {"grant_type": "client_credentials"}, client=client))
    # Changes and deletion take the same path through the client cache.
    for attempt in range(10):
        current = call(admin, "GET", f"/clients/{body['client_id']}")
        changed = call(admin, "PATCH", f"/clients/{body['client_id']}", json={"client_name": f"Rotated {attempt}"},
                       headers={"If-Match": current.headers["ETag"]})
        assert changed.status_code == 200, changed.text
    assert call(admin, "DELETE", f"/clients/{body['client_id']}").status_code == 204
    assert admin["server"].process.poll() is None, "the server is still running"


@pytest.mark.parametrize("stored, reason", [
    ("$scrypt$ln=22,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$" + "A" * 43, "scrypt memory 128·N·r must be at most 128 MiB"),
    ("$scrypt$ln=15,r=8,p=16$c2FsdHNhbHRzYWx0c2FsdA$" + "A" * 43, "scrypt work N·r·p must be at most 2^21"),
    ("$argon2id$v=19$m=1048576,t=1,p=1$c2FsdHNhbHRzYWx0$" + "A" * 43, "argon2 memory m (KiB) must be 8 to 131072"),
    ("$argon2id$v=19$m=131072,t=4,p=1$c2FsdHNhbHRzYWx0$" + "A" * 43, "argon2 memory times passes (m·t) must be at most 256 MiB"),
    ("$pbkdf2-sha256$10000000$c2FsdHNhbHQ$" + "A" * 43, "PBKDF2 rounds must be 1 to 2000000"),
    ("$2b$16$" + "a" * 53, "bcrypt cost must be 4 to 13"),
])
def test_an_import_refuses_hashes_costlier_than_the_servers_own(admin, stored, reason):
    email = f"costly-{random_token(6).lower()}@example.com"
    report = import_rows(admin, [{"email": email, "password_hash": stored}])
    assert report["created"] == 0 and report["refused"] == 1, report
    assert reason in report["failures"][0]["reason"], report
    assert call(admin, "GET", f"/users/{email}").status_code == 404


def test_hashes_at_the_caps_are_imported_and_work(admin):
    email = f"capped-{random_token(6).lower()}@example.com"
    report = import_rows(admin, [{"email": email, "password_hash": bcrypt.hashpw(b"capped-password-1", bcrypt.gensalt(rounds=13)).decode()}])
    assert report["created"] == 1, report
    assert signs_in(admin, email, "capped-password-1").kind == "redirect"


def test_an_unverified_row_cannot_take_over_an_account_whose_address_is_proven(admin):
    owner = new_user(admin, "Olga Owner")  # created by an administrator: the address counts as verified
    assert owner["email_verified"] is True
    squatter_hash = bcrypt.hashpw(b"squatter-password-1", bcrypt.gensalt(rounds=4)).decode()
    report = import_rows(admin, [{"email": owner["email"], "email_verified": False, "password_hash": squatter_hash,
                                  "name": "Squatter"}])
    assert report["updated"] == 0 and report["refused"] == 1, report
    assert "verified on the existing account" in report["failures"][0]["reason"], report
    after = call(admin, "GET", f"/users/{owner['id']}").json()
    assert after["profile"]["name"] == "Olga Owner" and after["version"] == owner["version"], after
    assert signs_in(admin, owner["email"], "squatter-password-1").kind == "login", "the squatter's password is not the account's"
    assert signs_in(admin, owner["email"], PASSWORD).kind == "redirect", "the owner's still is"
    # A verified row (the source proved the address) still updates it.
    report = import_rows(admin, [{"email": owner["email"], "email_verified": True, "name": "Olga Imported"}])
    assert report["updated"] == 1, report


def test_an_import_that_disables_an_account_ends_its_sessions_and_tokens(admin):
    user = new_user(admin, "Dora Disabled")
    tokens = user_agent_tokens(admin, User(user["id"], user["email"], PASSWORD, None))
    provider = admin["provider"]
    assert provider.userinfo(tokens["access_token"]).status_code == 200
    report = import_rows(admin, [{"id": user["id"], "email": user["email"], "email_verified": True, "disabled": True}])
    assert report["updated"] == 1, report
    assert call(admin, "GET", f"/users/{user['id']}").json()["disabled"] is True
    assert provider.userinfo(tokens["access_token"]).status_code == 401
    assert_oauth_error(provider.refresh(admin["app"], tokens["refresh_token"]), "invalid_grant", 400)


def test_only_a_first_party_client_may_be_allowed_the_admin_scope(admin):
    refused = call(admin, "POST", "/clients", json={"client_name": "Partner Admin", "grant_types": ["client_credentials"],
                                                    "scope": "tessera:admin"})
    assert "first-party" in problem(refused, 400, "invalid-request")["detail"]
    partner = call(admin, "POST", "/clients", json={"client_name": "Partner", "grant_types": ["client_credentials"],
                                                    "scope": "api"}).json()
    current = call(admin, "GET", f"/clients/{partner['client_id']}")
    widened = call(admin, "PATCH", f"/clients/{partner['client_id']}", json={"scope": "api tessera:admin"},
                   headers={"If-Match": current.headers["ETag"]})
    problem(widened, 400, "invalid-request")
    cli = run_cli(admin, "clients", "add", "--name", "CLI Partner Admin", "--grant-type", "client_credentials",
                  "--scope", "tessera:admin")
    assert cli.returncode != 0 and "first-party" in cli.stderr, (cli.stdout, cli.stderr)


@pytest.mark.parametrize("url, accepted", [
    ("http://id.example.com", False),
    ("http://192.0.2.10:8080", False),
    ("ftp://id.example.com", False),
    ("http://127.0.0.1:9", True),
    ("http://localhost:9", True),
])
def test_the_cli_sends_the_admin_secret_only_over_https_or_to_loopback(admin, url, accepted):
    env = {**os.environ, "TESSERA_ADMIN_CLIENT_ID": admin["ops"].client_id, "TESSERA_ADMIN_CLIENT_SECRET": admin["ops"].client_secret}
    done = subprocess.run([admin["cli"].binary, "users", "list", "--server", url], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode != 0, done.stdout
    if accepted:
        # Nobody listens on port 9: the refusal is the connection's, not the rule's.
        assert "clear text" not in done.stderr and "must be an https URL" not in done.stderr, done.stderr
    else:
        assert "clear text" in done.stderr or "must be an https URL" in done.stderr, done.stderr
