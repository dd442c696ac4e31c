"""The admin API (/admin/v1, docs/admin.md) and the CLI commands over it, against a server
and database of this module's own (it rotates keys and deletes clients):

- authorization: no token, a token without `tessera:admin`, a user's token without the admin
  role are refused (401/403, problem details, WWW-Authenticate); a client with the scope, and
  a user holding the role, are let in;
- clients: paged listing, create (secret once, Location, ETag), update only with a current
  If-Match (428 without, 412 with a stale one), a change the rules refuse changes nothing,
  secret rotation with and without a grace period (both secrets work, then only the new),
  delete ends the client's tokens;
- users: create, search by name and address, paging, a user's page (sessions, consents, last
  sign-in), a profile change validated by claim shape, password set and removed, disable
  (every way in refused, tokens dead) and enable, sign-out everywhere, delete;
- keys: listed without private parts, rotated, the new key signing at once;
- every answer matches docs/admin.openapi.json (schemathesis' response checks), the audit
  trail names the administrator of each change, and schemathesis fuzzes every operation
  with a real admin token without one server error;
- the CLI: the same operations on the database (`--database`) and on the running server
  (`--server`, credentials from the environment), tables for people and `--json`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from selenium.webdriver.common.by import By

from conftest import SERVER_ENV
from test_browser import driver, wait_title  # noqa: F401 (driver: the Chromium fixture)
from e2e_support import (CLI, ROOT, Client, Provider, TesseraServer, User, UserAgent, assert_oauth_error, assert_tokens,
                         new_database, query_rows, random_token, unverified_header)

ADMIN_DOC = ROOT / "docs" / "admin.openapi.json"
PASSWORD = "admin-api-password-0123"
REDIRECT = "http://127.0.0.1:9/admin-callback"


def shot(driver, artifacts, name: str) -> None:
    """The console as an administrator sees it, on a desktop (it is a wide, table-first tool:
    the hosted pages, not the console, are held to a phone's width)."""
    driver.save_screenshot(str(artifacts / f"{name}.png"))


@pytest.fixture(scope="module")
def admin(binary, workdir):
    database = new_database(workdir, "admin-api")
    cli = CLI(binary, database, workdir)
    ops = cli.add_client("Operations", grant_types=["client_credentials"], scopes=["tessera:admin"], first_party=True)
    app = cli.add_client("Admin Test App", redirect_uris=[REDIRECT], first_party=True,
                         grant_types=["authorization_code", "refresh_token"],
                         scopes=["openid", "email", "profile", "offline_access", "tessera:admin"])
    plain = cli.add_client("No Admin Scope", grant_types=["client_credentials"], scopes=["api"])
    server = TesseraServer(binary, database, workdir, env=SERVER_ENV, name="admin-api").start()
    provider = Provider(server.issuer)
    ops_client = Client(ops["client_id"], ops["client_secret"], [], ops)
    token = assert_tokens(provider.post("token_endpoint", {"grant_type": "client_credentials", "scope": "tessera:admin"},
                                        client=ops_client))["access_token"]
    yield {"server": server, "provider": provider, "cli": cli, "token": token, "ops": ops_client,
           "app": Client(app["client_id"], app["client_secret"], [REDIRECT], app),
           "plain": Client(plain["client_id"], plain["client_secret"], [], plain), "database": database}
    server.stop()


def call(admin, method: str, path: str, *, token: str | None = "admin", **kwargs) -> requests.Response:
    headers = kwargs.pop("headers", {})
    if token:
        headers["Authorization"] = "Bearer " + (admin["token"] if token == "admin" else token)
    return requests.request(method, admin["server"].issuer + "/admin/v1" + path, headers=headers, timeout=60, **kwargs)


def conforms(response: requests.Response, path: str, method: str) -> requests.Response:
    """schemathesis' own checks: the status is documented, and the content type, headers and body match."""
    import schemathesis
    from schemathesis import checks

    operation = schemathesis.openapi.from_path(str(ADMIN_DOC))[path][method.upper()]
    case = operation.Case(path_parameters={"id": "x"}) if "{id}" in path else operation.Case()
    case.validate_response(response, checks=[
        checks.status_code_conformance, checks.content_type_conformance, checks.response_headers_conformance,
        checks.response_schema_conformance])
    return response


def problem(response: requests.Response, status: int, kind: str) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["Content-Type"].startswith("application/problem+json"), response.headers
    body = response.json()
    assert body["type"] == "urn:tessera:problem:" + kind and body["status"] == status and body["detail"], body
    return body


def user_agent_tokens(admin, user: User, scope: str = "openid email offline_access") -> dict:
    return UserAgent(admin["provider"]).tokens(admin["app"], user, scope=scope)


def new_user(admin, name: str = "Ada Lovelace", **extra) -> dict:
    email = f"{name.split()[0].lower()}-{random_token(6).lower()}@example.com"
    created = call(admin, "POST", "/users", json={"email": email, "password": PASSWORD, "profile": {"name": name}, **extra})
    assert created.status_code == 201, created.text
    return created.json()


def as_user(body: dict) -> User:
    return User(body["id"], body["email"], PASSWORD, body["profile"].get("name"))


# ---------------------------------------------------------------------------
# Who may call it


def test_no_token_a_token_without_the_scope_and_a_user_without_the_role_are_refused(admin):
    no_token = conforms(call(admin, "GET", "/clients", token=None), "/admin/v1/clients", "GET")
    problem(no_token, 401, "unauthorized")
    assert no_token.headers["WWW-Authenticate"].startswith("Bearer"), no_token.headers
    problem(call(admin, "GET", "/clients", token="not-a-token"), 401, "unauthorized")

    plain = assert_tokens(admin["provider"].post("token_endpoint", {"grant_type": "client_credentials"}, client=admin["plain"]))
    refused = conforms(call(admin, "GET", "/users", token=plain["access_token"]), "/admin/v1/users", "GET")
    assert "tessera:admin" in problem(refused, 403, "forbidden")["detail"]
    assert "insufficient_scope" in refused.headers["WWW-Authenticate"]

    # A user's token with the scope works only while the user holds the admin role.
    body = new_user(admin, "Rolf Nobody", email_verified=False)
    tokens = user_agent_tokens(admin, as_user(body), scope="openid email tessera:admin")
    assert "tessera:admin" in tokens["scope"].split()
    problem(call(admin, "GET", "/users", token=tokens["access_token"]), 403, "forbidden")
    version = call(admin, "GET", f"/users/{body['id']}").headers["ETag"]
    granted = call(admin, "PATCH", f"/users/{body['id']}", json={"roles": ["admin"]}, headers={"If-Match": version})
    assert granted.status_code == 200 and granted.json()["roles"] == ["admin"], granted.text
    listed = call(admin, "GET", "/users", token=tokens["access_token"], params={"q": body["email"]})
    assert listed.status_code == 200 and [u["id"] for u in listed.json()["users"]] == [body["id"]], listed.text
    # What that user changes is recorded under their address.
    assert call(admin, "POST", f"/users/{body['id']}/verify-email", token=tokens["access_token"]).status_code == 200
    events = call(admin, "GET", "/audit", params={"user": body["id"], "kind": "user_changed"}).json()["events"]
    assert any(e["detail"] == f"email verified by {body['email']}" for e in events), events


def test_the_document_is_served_and_is_the_file(admin):
    served = requests.get(admin["server"].issuer + "/openapi/admin.json", timeout=30)
    assert served.status_code == 200 and served.json() == json.loads(ADMIN_DOC.read_text())


# ---------------------------------------------------------------------------
# Clients


def test_clients_are_listed_by_name_in_pages(admin):
    names = [f"Paged {random_token(4)} {n}" for n in range(3)]
    for name in names:
        assert call(admin, "POST", "/clients", json={"client_name": name, "grant_types": ["client_credentials"],
                                                     "scope": "api"}).status_code == 201
    seen, token = [], None
    for _ in range(20):
        page = conforms(call(admin, "GET", "/clients", params={"limit": 2, **({"page_token": token} if token else {})}),
                        "/admin/v1/clients", "GET").json()
        assert len(page["clients"]) <= 2
        seen += [c["client_name"] for c in page["clients"]]
        token = page["next_page_token"]
        if token is None:
            break
    assert seen == sorted(seen, key=lambda n: n) or seen == sorted(seen), seen
    assert set(names) <= set(seen) and len(seen) == len(set(seen)), seen
    assert all("client_secret" not in client for client in page["clients"])
    problem(call(admin, "GET", "/clients", params={"page_token": "garbage"}), 400, "invalid-request")
    problem(call(admin, "GET", "/clients", params={"limit": 1000}), 400, "invalid-request")


def test_a_client_is_created_shown_changed_only_with_a_current_etag_and_refused_changes_change_nothing(admin):
    created = conforms(call(admin, "POST", "/clients", json={
        "client_name": "Shop", "redirect_uris": ["https://shop.example.com/cb"], "scope": "openid email",
        "link_domains": ["shop.example.com"]}), "/admin/v1/clients", "POST")
    assert created.status_code == 201, created.text
    client = created.json()
    assert len(client["client_secret"]) >= 32 and client["token_endpoint_auth_method"] == "client_secret_basic"
    assert created.headers["ETag"] == '"1"' and created.headers["Location"].endswith("/admin/v1/clients/" + client["client_id"])
    path = "/clients/" + client["client_id"]
    shown = conforms(call(admin, "GET", path), "/admin/v1/clients/{id}", "GET")
    assert "client_secret" not in shown.json() and shown.json()["link_domains"] == ["shop.example.com"]

    problem(conforms(call(admin, "PATCH", path, json={"client_name": "Shop 2"}), "/admin/v1/clients/{id}", "PATCH"),
            428, "precondition-required")
    changed = conforms(call(admin, "PATCH", path, json={"client_name": "Shop 2", "redirect_uris": ["https://shop.example.com/cb2"]},
                            headers={"If-Match": shown.headers["ETag"]}), "/admin/v1/clients/{id}", "PATCH")
    assert changed.status_code == 200 and changed.json()["client_name"] == "Shop 2" and changed.headers["ETag"] == '"2"'
    # Another administrator still holding version 1 is told, and overwrites nothing.
    stale = problem(call(admin, "PATCH", path, json={"client_name": "Shop 3"}, headers={"If-Match": '"1"'}), 412, "version-mismatch")
    assert stale["current_version"] == 2
    # A change the registration rules refuse (plain http to a non-loopback host) changes nothing.
    problem(call(admin, "PATCH", path, json={"redirect_uris": ["http://shop.example.com/cb"]}, headers={"If-Match": '"2"'}),
            400, "invalid-request")
    problem(call(admin, "PATCH", path, json={"colour": "red"}, headers={"If-Match": '"2"'}), 400, "invalid-request")
    problem(call(admin, "PATCH", path, data="client_name=x", headers={"If-Match": '"2"', "Content-Type": "application/x-www-form-urlencoded"}),
            415, "unsupported-media-type")
    assert call(admin, "GET", path).json()["redirect_uris"] == ["https://shop.example.com/cb2"]
    # `*` overwrites whatever is there.
    assert call(admin, "PATCH", path, json={"first_party": True}, headers={"If-Match": "*"}).json()["first_party"] is True
    problem(call(admin, "GET", "/clients/no-such-client"), 404, "not-found")
    problem(call(admin, "POST", "/clients", json={"client_name": "Dup", "client_id": client["client_id"],
                                                  "grant_types": ["client_credentials"], "scope": "api"}), 409, "conflict")
    events = call(admin, "GET", "/audit", params={"kind": "client_changed"}).json()["events"]
    mine = [e["detail"] for e in events if e.get("client_id") == client["client_id"]]
    ops = admin["ops"].client_id
    assert f"registered by client {ops}" in mine and f"changed name, redirect_uris by client {ops}" in mine, mine


def test_a_rotated_secret_keeps_the_old_one_for_the_grace_period_only(admin):
    provider = admin["provider"]
    body = call(admin, "POST", "/clients", json={"client_name": "Rotating", "grant_types": ["client_credentials"],
                                                 "scope": "api"}).json()
    old = Client(body["client_id"], body["client_secret"], [], body)
    rotated = conforms(call(admin, "POST", f"/clients/{old.client_id}/secret", json={"grace_period": 3600}),
                       "/admin/v1/clients/{id}/secret", "POST")
    assert rotated.status_code == 200, rotated.text
    new = Client(old.client_id, rotated.json()["client_secret"], [], body)
    assert new.client_secret != old.client_secret and rotated.json()["previous_secret_expires_at"] > 0
    for client in (old, new):
        assert_tokens(provider.post("token_endpoint", {"grant_type": "client_credentials"}, client=client))
    # Without a grace period the replaced secret stops at once (and so does the one before it).
    newest = Client(old.client_id, call(admin, "POST", f"/clients/{old.client_id}/secret").json()["client_secret"], [], body)
    assert_tokens(provider.post("token_endpoint", {"grant_type": "client_credentials"}, client=newest))
    for client in (old, new):
        assert_oauth_error(provider.post("token_endpoint", {"grant_type": "client_credentials"}, client=client), "invalid_client")
    problem(call(admin, "POST", f"/clients/{old.client_id}/secret", json={"grace_period": 100 * 86400}), 400, "invalid-request")
    public = call(admin, "POST", "/clients", json={"client_name": "Public", "token_endpoint_auth_method": "none",
                                                   "redirect_uris": ["com.example.app:/cb"]}).json()
    assert "client_secret" not in public
    problem(call(admin, "POST", f"/clients/{public['client_id']}/secret"), 400, "invalid-request")


def test_deleting_a_client_ends_its_tokens(admin):
    body = call(admin, "POST", "/clients", json={"client_name": "Doomed", "redirect_uris": [REDIRECT], "first_party": True,
                                                 "scope": "openid email offline_access"}).json()
    doomed = Client(body["client_id"], body["client_secret"], [REDIRECT], body)
    user = as_user(new_user(admin, "Dora Doomed"))
    tokens = UserAgent(admin["provider"]).tokens(doomed, user, scope="openid email offline_access")
    assert admin["provider"].userinfo(tokens["access_token"]).status_code == 200
    deleted = conforms(call(admin, "DELETE", "/clients/" + doomed.client_id), "/admin/v1/clients/{id}", "DELETE")
    assert deleted.status_code == 204
    assert admin["provider"].userinfo(tokens["access_token"]).status_code == 401
    assert_oauth_error(admin["provider"].refresh(doomed, tokens["refresh_token"]), "invalid_client")
    problem(call(admin, "DELETE", "/clients/" + doomed.client_id), 404, "not-found")


# ---------------------------------------------------------------------------
# Users


def test_users_are_created_searched_and_paged(admin):
    tag = random_token(5).lower()
    made = [call(admin, "POST", "/users", json={"email": f"{n}-{tag}@example.com", "profile": {"name": f"Grace {tag} {n}"}})
            for n in ("a", "b", "c")]
    assert all(r.status_code == 201 for r in made), [r.text for r in made]
    conforms(made[0], "/admin/v1/users", "POST")
    assert made[0].json()["has_password"] is False and made[0].json()["email_verified"] is True
    by_name = conforms(call(admin, "GET", "/users", params={"q": f"GRACE {tag}"}), "/admin/v1/users", "GET").json()
    assert [u["email"] for u in by_name["users"]] == [f"{n}-{tag}@example.com" for n in ("a", "b", "c")]
    by_id = call(admin, "GET", "/users", params={"q": made[1].json()["id"]}).json()["users"]
    assert [u["email"] for u in by_id] == [f"b-{tag}@example.com"]
    first = call(admin, "GET", "/users", params={"q": tag, "limit": 2}).json()
    second = call(admin, "GET", "/users", params={"q": tag, "limit": 2, "page_token": first["next_page_token"]}).json()
    assert [u["email"][0] for u in first["users"] + second["users"]] == ["a", "b", "c"] and second["next_page_token"] is None
    # Percent and underscore are searched for literally.
    assert call(admin, "GET", "/users", params={"q": "%"}).json()["users"] == []
    problem(call(admin, "POST", "/users", json={"email": f"a-{tag}@example.com"}), 409, "conflict")
    problem(call(admin, "POST", "/users", json={"email": "not-an-address"}), 400, "invalid-request")
    weak = problem(call(admin, "POST", "/users", json={"email": f"d-{tag}@example.com", "password": "password"}), 400, "invalid-request")
    assert "password" in weak["detail"]
    bad = problem(call(admin, "POST", "/users", json={"email": f"e-{tag}@example.com", "profile": {"birthdate": "2001-02-29"}}),
                  400, "invalid-claim")
    assert bad["claim"] == "birthdate"
    problem(call(admin, "POST", "/users", json={"email": f"f-{tag}@example.com", "roles": ["root"]}), 400, "invalid-request")


def test_a_users_page_shows_sessions_consents_and_the_last_sign_in(admin):
    body = new_user(admin, "Sam Page")
    user = as_user(body)
    agent = UserAgent(admin["provider"])
    agent.tokens(admin["app"], user, scope="openid email")
    shown = conforms(call(admin, "GET", "/users/" + body["email"]), "/admin/v1/users/{id}", "GET")
    page = shown.json()
    assert page["id"] == body["id"] and page["has_password"] is True and "password_hash" not in shown.text
    assert len(page["sessions"]) == 1 and page["sessions"][0]["methods"] == ["pwd"]
    assert page["last_sign_in"]["method"] == "password" and page["last_sign_in"]["ip"]
    assert page["consents"] == [] or all(c["client_id"] for c in page["consents"])
    assert shown.headers["ETag"] == f'"{page["version"]}"'


def test_a_profile_change_is_validated_and_merged(admin):
    body = new_user(admin, "Pat Profile")
    path = "/users/" + body["id"]
    etag = call(admin, "GET", path).headers["ETag"]
    bad = problem(call(admin, "PATCH", path, json={"profile": {"birthdate": "1990-13-01"}}, headers={"If-Match": etag}),
                  400, "invalid-claim")
    assert bad["claim"] == "birthdate"
    changed = conforms(call(admin, "PATCH", path, json={"profile": {"nickname": "Пэт", "name": None}}, headers={"If-Match": etag}),
                       "/admin/v1/users/{id}", "PATCH")
    assert changed.status_code == 200 and changed.json()["profile"] == {"nickname": "Пэт"}, changed.text
    problem(call(admin, "PATCH", path, json={"profile": {"nickname": "x"}}, headers={"If-Match": etag}), 412, "version-mismatch")


def test_password_set_and_removed(admin):
    body = new_user(admin, "Paul Password")
    user = as_user(body)
    new_password = "a-new-admin-set-password-42"
    conforms(call(admin, "PUT", f"/users/{body['id']}/password", json={"password": new_password}),
             "/admin/v1/users/{id}/password", "PUT")
    assert UserAgent(admin["provider"]).authorize(admin["app"], user=user, scope="openid").kind == "login"
    user.password = new_password
    assert UserAgent(admin["provider"]).authorize(admin["app"], user=user, scope="openid").kind == "redirect"
    problem(call(admin, "PUT", f"/users/{body['id']}/password", json={"password": "short"}), 400, "invalid-request")
    removed = conforms(call(admin, "DELETE", f"/users/{body['id']}/password"), "/admin/v1/users/{id}/password", "DELETE")
    assert removed.json()["has_password"] is False
    assert UserAgent(admin["provider"]).authorize(admin["app"], user=user, scope="openid").kind == "login"


def test_a_disabled_user_cannot_sign_in_and_their_tokens_stop_working(admin):
    body = new_user(admin, "Dan Disabled")
    user = as_user(body)
    tokens = user_agent_tokens(admin, user)
    disabled = conforms(call(admin, "POST", f"/users/{body['id']}/disable"), "/admin/v1/users/{id}/disable", "POST")
    assert disabled.json()["disabled"] is True and disabled.json()["disabled_at"] > 0
    provider = admin["provider"]
    assert provider.userinfo(tokens["access_token"]).status_code == 401
    assert_oauth_error(provider.refresh(admin["app"], tokens["refresh_token"]), "invalid_grant")
    attempt = UserAgent(provider).authorize(admin["app"], user=user, scope="openid")
    assert attempt.kind == "login" and attempt.response.status_code == 403, attempt.describe()
    assert "disabled" in attempt.response.text
    # Native password sign-in: the right password is told the account is disabled (a wrong one is not).
    start = requests.post(admin["server"].issuer + "/oauth2/v2.0/initiate", data={
        "client_id": admin["app"].client_id, "client_secret": admin["app"].client_secret, "username": user.email,
        "challenge_type": "password redirect"}, timeout=30)
    assert start.status_code == 200, start.text
    challenge = requests.post(admin["server"].issuer + "/oauth2/v2.0/challenge", data={
        "client_id": admin["app"].client_id, "client_secret": admin["app"].client_secret,
        "continuation_token": start.json()["continuation_token"], "challenge_type": "password redirect"}, timeout=30)
    assert challenge.status_code == 200, challenge.text
    token = requests.post(admin["server"].issuer + "/oauth2/v2.0/token", data={
        "client_id": admin["app"].client_id, "client_secret": admin["app"].client_secret, "grant_type": "password",
        "continuation_token": challenge.json()["continuation_token"], "password": PASSWORD, "scope": "openid"}, timeout=30)
    assert token.status_code == 400 and token.json().get("suberror") == "user_disabled", token.text

    enabled = conforms(call(admin, "POST", f"/users/{body['id']}/enable"), "/admin/v1/users/{id}/enable", "POST")
    assert enabled.json()["disabled"] is False and "disabled_at" not in enabled.json()
    assert UserAgent(provider).authorize(admin["app"], user=user, scope="openid").kind == "redirect"
    kinds = [e["detail"] for e in call(admin, "GET", "/audit", params={"user": body["email"]}).json()["events"]]
    ops = admin["ops"].client_id
    assert f"disabled by client {ops}" in kinds and f"enabled by client {ops}" in kinds, kinds
    assert "password: account disabled" in kinds, kinds


def test_sign_out_everywhere_and_delete(admin):
    body = new_user(admin, "Sid Signout")
    user = as_user(body)
    tokens = user_agent_tokens(admin, user)
    signed_out = conforms(call(admin, "POST", f"/users/{body['id']}/sign-out"), "/admin/v1/users/{id}/sign-out", "POST")
    assert signed_out.status_code == 204
    assert_oauth_error(admin["provider"].refresh(admin["app"], tokens["refresh_token"]), "invalid_grant")
    assert call(admin, "GET", "/users/" + body["id"]).json()["sessions"] == []
    assert conforms(call(admin, "DELETE", "/users/" + body["email"]), "/admin/v1/users/{id}", "DELETE").status_code == 204
    problem(conforms(call(admin, "GET", "/users/" + body["id"]), "/admin/v1/users/{id}", "GET"), 404, "not-found")
    events = call(admin, "GET", "/audit", params={"user": body["id"], "kind": "account_deleted"}).json()["events"]
    assert events and events[0]["detail"] == f"by client {admin['ops'].client_id}", events


# ---------------------------------------------------------------------------
# Keys


def test_keys_are_listed_without_private_parts_and_rotated(admin):
    listed = conforms(call(admin, "GET", "/keys"), "/admin/v1/keys", "GET")
    keys = listed.json()["keys"]
    assert [k["status"] for k in keys[:2]] == ["current", "next"], keys
    assert all(set(k) <= {"kid", "alg", "status", "published", "created_at", "activated_at", "retired_at"} for k in keys)
    rotated = conforms(call(admin, "POST", "/keys/rotate"), "/admin/v1/keys/rotate", "POST").json()
    assert rotated["current"] == keys[1]["kid"]
    statuses = {k["kid"]: (k["status"], k["published"]) for k in rotated["keys"]}
    assert statuses[keys[0]["kid"]] == ("retired", True) and statuses[keys[1]["kid"]] == ("current", True)
    token = assert_tokens(admin["provider"].post("token_endpoint", {"grant_type": "client_credentials", "scope": "tessera:admin"},
                                                 client=admin["ops"]))["access_token"]
    assert unverified_header(token)["kid"] == rotated["current"]
    assert call(admin, "GET", "/keys", token=token).status_code == 200
    assert any(e["kind"] == "keys_rotated" for e in call(admin, "GET", "/audit").json()["events"])


# ---------------------------------------------------------------------------
# The CLI, on the database and on the server


def run_cli(admin, *args: str, server: bool = False, input: str | None = None) -> subprocess.CompletedProcess:
    cli = admin["cli"]
    target = ["--server", admin["server"].issuer] if server else ["--database", str(cli.database)]
    env = {**os.environ, "TESSERA_ADMIN_CLIENT_ID": admin["ops"].client_id, "TESSERA_ADMIN_CLIENT_SECRET": admin["ops"].client_secret}
    return subprocess.run([cli.binary, *args, *target], cwd=cli.workdir, input=input, capture_output=True, text=True,
                          timeout=180, env=env)


@pytest.mark.parametrize("remote", [False, True], ids=["database", "server"])
def test_the_cli_lists_shows_updates_and_disables(admin, remote):
    body = new_user(admin, f"Cli {random_token(4)} User")
    listed = run_cli(admin, "users", "list", "--query", body["email"], server=remote)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:3] == ["ID", "EMAIL", "NAME"] and body["email"] in lines[1], listed.stdout
    as_json = run_cli(admin, "users", "show", body["email"], "--json", server=remote)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["id"] == body["id"], as_json.stderr
    profile = admin["cli"].workdir / f"cli-profile-{random_token(4)}.json"
    profile.write_text(json.dumps({"nickname": "Клава"}, ensure_ascii=False), encoding="utf-8")
    updated = run_cli(admin, "users", "update", body["email"], "--profile", str(profile), "--role", "admin", "--json", server=remote)
    assert updated.returncode == 0, updated.stderr
    assert json.loads(updated.stdout)["profile"]["nickname"] == "Клава" and json.loads(updated.stdout)["roles"] == ["admin"]
    disabled = run_cli(admin, "users", "disable", body["email"], server=remote)
    assert disabled.returncode == 0 and "disabled" in disabled.stdout, disabled.stderr
    assert call(admin, "GET", "/users/" + body["id"]).json()["disabled"] is True
    missing = run_cli(admin, "users", "show", "nobody-" + random_token(4) + "@example.com", server=remote)
    assert missing.returncode == 1 and "was not found" in missing.stderr, (missing.returncode, missing.stderr)
    bad = profile.with_name(profile.stem + "-bad.json")
    bad.write_text(json.dumps({"birthdate": "nope"}), encoding="utf-8")
    refused = run_cli(admin, "users", "update", body["email"], "--profile", str(bad), server=remote)
    assert refused.returncode == 2 and "birthdate" in refused.stderr, (refused.returncode, refused.stderr)

    clients = run_cli(admin, "clients", "list", "--limit", "200", server=remote)
    assert clients.returncode == 0 and "Operations" in clients.stdout, clients.stderr
    shown = run_cli(admin, "clients", "show", admin["app"].client_id, server=remote)
    assert shown.returncode == 0 and re.search(r"^client_name\s+Admin Test App$", shown.stdout, re.M), shown.stdout
    keys = run_cli(admin, "keys", "list", "--json", server=remote)
    assert keys.returncode == 0 and json.loads(keys.stdout)["keys"][0]["status"] == "current", keys.stderr


def test_the_cli_changes_and_rotates_a_client(admin):
    made = call(admin, "POST", "/clients", json={"client_name": "CLI Made", "grant_types": ["client_credentials"], "scope": "api"}).json()
    renamed = run_cli(admin, "clients", "update", made["client_id"], "--name", "CLI Renamed", "--json", server=True)
    assert renamed.returncode == 0 and json.loads(renamed.stdout)["client_name"] == "CLI Renamed", renamed.stderr
    rotated = run_cli(admin, "clients", "rotate-secret", made["client_id"], "--grace-period", "1h")
    assert rotated.returncode == 0, rotated.stderr
    secret = re.search(r"^client_secret: (\S+)", rotated.stdout, re.M).group(1)
    assert "the previous secret works until" in rotated.stdout
    fresh = Client(made["client_id"], secret, [], made)
    assert_tokens(admin["provider"].post("token_endpoint", {"grant_type": "client_credentials"}, client=fresh))
    deleted = run_cli(admin, "clients", "delete", made["client_id"], server=True)
    assert deleted.returncode == 0, deleted.stderr
    assert run_cli(admin, "clients", "show", made["client_id"]).returncode == 1
    no_credentials = subprocess.run([admin["cli"].binary, "clients", "list", "--server", admin["server"].issuer],
                                    capture_output=True, text=True, timeout=60,
                                    env={k: v for k, v in os.environ.items() if not k.startswith("TESSERA_ADMIN")})
    assert no_credentials.returncode != 0 and "TESSERA_ADMIN_CLIENT_ID" in no_credentials.stderr, no_credentials.stderr


# ---------------------------------------------------------------------------
# The console, in headless Chromium


def press(driver, button) -> None:
    """Clicks a form's button and waits for the page it leads to: a new document (without the
    mark this one gets) that has finished loading."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.__beforePress = true")
    button.click()

    def arrived(d) -> bool:
        try:
            return d.execute_script("return window.__beforePress === undefined && document.readyState === 'complete'")
        except WebDriverException:  # between documents
            return False

    WebDriverWait(driver, 30).until(arrived)


def console(admin, path: str) -> str:
    return admin["server"].issuer + path


def sign_in_to_console(driver, admin, email: str, password: str) -> None:
    driver.delete_all_cookies()
    driver.get(console(admin, "/admin/users"))
    wait_title(driver, "Sign in to the admin console")
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.NAME, "password").send_keys(password)
    press(driver, driver.find_element(By.CSS_SELECTOR, "button[type=submit]"))


def test_the_console_needs_the_admin_role(admin, driver, artifacts):
    driver.get(console(admin, "/admin/users"))
    wait_title(driver, "Sign in to the admin console")
    shot(driver, artifacts, "admin-01-sign-in")
    plain = new_user(admin, "Norma Plain")
    sign_in_to_console(driver, admin, plain["email"], PASSWORD)
    wait_title(driver, "Not an administrator")
    assert plain["email"] in driver.find_element(By.TAG_NAME, "main").text
    assert driver.find_element(By.LINK_TEXT, "Sign out").get_attribute("href").endswith("/logout")
    shot(driver, artifacts, "admin-02-not-an-administrator")
    # A form posted without the console's session does nothing.
    target = new_user(admin, "Tara Target")
    refused = requests.post(console(admin, f"/admin/users/{target['id']}/disable"), data={"csrf_token": "x"}, timeout=30)
    assert refused.status_code == 200 and "Sign in to the admin console" in refused.text
    assert call(admin, "GET", "/users/" + target["id"]).json()["disabled"] is False


def test_an_administrator_manages_users_in_the_console(admin, driver, artifacts):
    boss = new_user(admin, "Olga Admin", roles=["admin"])
    target = new_user(admin, "Victor Target")
    user_agent_tokens(admin, as_user(target), scope="openid email")  # a session and a consent to show
    sign_in_to_console(driver, admin, boss["email"], PASSWORD)
    wait_title(driver, "Users")
    shot(driver, artifacts, "admin-03-users")
    # A user made from the console can sign in with the password given there.
    made_email = f"made-{random_token(5).lower()}@example.com"
    driver.find_element(By.ID, "new_email").send_keys(made_email)
    driver.find_element(By.ID, "new_name").send_keys("Made In Console")
    driver.find_element(By.ID, "new_password").send_keys("console-made-password-7")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Create']"))
    wait_title(driver, made_email)
    assert "The user is created" in driver.find_element(By.CSS_SELECTOR, ".notice").text
    assert signs_in(admin, made_email, "console-made-password-7").kind == "redirect"
    driver.get(console(admin, "/admin/users"))
    wait_title(driver, "Users")
    search = driver.find_element(By.NAME, "q")
    search.send_keys("Victor Target")
    press(driver, driver.find_element(By.CSS_SELECTOR, "form.search button"))
    wait_title(driver, "Users")
    rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 1 and target["email"] in rows[0].text, [r.text for r in rows]
    press(driver, rows[0].find_element(By.TAG_NAME, "a"))
    wait_title(driver, target["email"])
    page = driver.find_element(By.TAG_NAME, "main").text
    assert "Victor Target" in page and "pwd" in page, page
    shot(driver, artifacts, "admin-04-user")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Disable']"))
    wait_title(driver, target["email"])
    assert "The user is disabled" in driver.find_element(By.CSS_SELECTOR, ".notice").text
    assert call(admin, "GET", "/users/" + target["id"]).json()["disabled"] is True
    shot(driver, artifacts, "admin-05-user-disabled")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Enable']"))
    wait_title(driver, target["email"])
    assert call(admin, "GET", "/users/" + target["id"]).json()["disabled"] is False
    # Deleting needs the address typed; a wrong one deletes nothing.
    driver.find_element(By.ID, "confirm").send_keys("someone-else@example.com")
    press(driver, driver.find_element(By.CSS_SELECTOR, "button.danger"))
    wait_title(driver, target["email"])
    assert "nothing was deleted" in driver.find_element(By.CSS_SELECTOR, ".alert").text
    driver.find_element(By.ID, "confirm").send_keys(target["email"])
    press(driver, driver.find_element(By.CSS_SELECTOR, "button.danger"))
    wait_title(driver, "Users")
    assert "The user is deleted" in driver.find_element(By.CSS_SELECTOR, ".notice").text
    assert call(admin, "GET", "/users/" + target["id"]).status_code == 404
    events = call(admin, "GET", "/audit", params={"user": target["id"]}).json()["events"]
    assert any(e.get("detail") == f"disabled by {boss['email']}" for e in events), events


def test_an_administrator_manages_clients_keys_and_reads_the_audit_log(admin, driver, artifacts):
    boss = new_user(admin, "Ivan Admin", roles=["admin"])
    made = call(admin, "POST", "/clients", json={"client_name": "Console Shop", "redirect_uris": ["https://shop.example.com/cb"],
                                                 "scope": "openid email"}).json()
    sign_in_to_console(driver, admin, boss["email"], PASSWORD)
    wait_title(driver, "Users")
    driver.get(console(admin, "/admin/clients"))
    wait_title(driver, "Clients")
    shot(driver, artifacts, "admin-06-clients")
    # A service registered from the console: its secret is shown once, and it works.
    driver.find_element(By.ID, "new_client_name").send_keys("Console Service")
    driver.find_element(By.ID, "kind").send_keys("Service")
    scope = driver.find_element(By.ID, "new_scope")
    scope.clear()
    scope.send_keys("api")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Register']"))
    wait_title(driver, "Console Service")
    service_id = driver.find_element(By.XPATH, "//dt[normalize-space()='Client id']/following-sibling::dd[1]").text
    service = Client(service_id, driver.find_element(By.ID, "client-secret").text, [], {})
    assert_tokens(admin["provider"].post("token_endpoint", {"grant_type": "client_credentials", "scope": "api"}, client=service))
    driver.get(console(admin, "/admin/clients/" + made["client_id"]))
    wait_title(driver, "Console Shop")
    name = driver.find_element(By.ID, "client_name")
    name.clear()
    name.send_keys("Console Shop Renamed")
    uris = driver.find_element(By.ID, "redirect_uris")
    uris.send_keys("\nhttps://shop.example.com/cb2")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Save']"))
    wait_title(driver, "Console Shop Renamed")
    assert call(admin, "GET", "/clients/" + made["client_id"]).json()["redirect_uris"] == [
        "https://shop.example.com/cb", "https://shop.example.com/cb2"]
    shot(driver, artifacts, "admin-07-client")
    # Someone else changes it meanwhile: this page's form is stale, and is told so.
    call(admin, "PATCH", "/clients/" + made["client_id"], json={"first_party": True}, headers={"If-Match": "*"})
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Save']"))
    assert "changed by someone else" in driver.find_element(By.CSS_SELECTOR, ".alert").text
    driver.find_element(By.ID, "grace_period").send_keys("1 hour")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Rotate the secret']"))
    secret = driver.find_element(By.ID, "client-secret").text
    shot(driver, artifacts, "admin-08-client-secret")
    # The new secret authenticates the client (revoking an unknown token answers 200 only to a client that did).
    assert admin["provider"].revoke(Client(made["client_id"], secret, [], made), "not-a-token").status_code == 200
    assert admin["provider"].revoke(Client(made["client_id"], "wrong-" + secret, [], made), "not-a-token").status_code == 401
    driver.get(console(admin, "/admin/keys"))
    wait_title(driver, "Signing keys")
    shot(driver, artifacts, "admin-09-keys")
    before = call(admin, "GET", "/keys").json()["keys"]
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Rotate the signing keys']"))
    wait_title(driver, "Signing keys")
    assert call(admin, "GET", "/keys").json()["keys"][0]["kid"] == before[1]["kid"]
    driver.get(console(admin, "/admin/audit?kind=client_changed"))
    wait_title(driver, "Audit log")
    rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert rows and all("client_changed" in r.text for r in rows)
    assert any(f"by {boss['email']}" in r.text for r in rows), [r.text for r in rows]
    shot(driver, artifacts, "admin-10-audit")
    driver.get(console(admin, "/admin/users?ui_locales=ru"))
    wait_title(driver, "Пользователи")
    assert "Журнал аудита" in driver.find_element(By.TAG_NAME, "nav").text
    shot(driver, artifacts, "admin-11-users-ru")


# ---------------------------------------------------------------------------
# Moving users in: Firebase exports, PHC hashes


FIREBASE_README = {  # github.com/firebase/scrypt's README: the project's parameters and one exported user
    "signer_key": "jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==",
    "salt_separator": "Bw==", "rounds": 8, "mem_cost": 14,
    "salt": "42xEC+ixf3L2lw==", "password": "user1password",
    "hash": "lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==",
}


def firebase_hash(password: str, salt: bytes) -> str:
    """Firebase's modified scrypt, written here from its description: scrypt(password, salt +
    separator, N=2^mem_cost, r=rounds, p=1) keys AES-256-CTR (zero counter) over the signer key."""
    import base64
    import hashlib
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    f = FIREBASE_README
    key = hashlib.scrypt(password.encode(), salt=salt + base64.b64decode(f["salt_separator"]), n=2 ** f["mem_cost"],
                         r=f["rounds"], p=1, dklen=32, maxmem=64 * 1024 * 1024)
    encryptor = Cipher(algorithms.AES(key), modes.CTR(b"\0" * 16)).encryptor()
    return base64.b64encode(encryptor.update(base64.b64decode(f["signer_key"])) + encryptor.finalize()).decode()


def signs_in(admin, email: str, password: str):
    return UserAgent(admin["provider"]).authorize(admin["app"], user=User("", email, password, None), scope="openid")


def test_the_firebase_readme_vector_is_what_this_test_computes():
    import base64
    assert firebase_hash(FIREBASE_README["password"], base64.b64decode(FIREBASE_README["salt"])) == FIREBASE_README["hash"]


def test_a_firebase_export_is_imported_and_its_users_keep_their_passwords(admin, workdir):
    import base64
    tag = random_token(4).lower()
    own_salt = os.urandom(12)
    export = {"users": [
        {"localId": f"fbReadme{tag}", "email": f"readme-{tag}@example.com", "emailVerified": True,
         "passwordHash": FIREBASE_README["hash"], "salt": FIREBASE_README["salt"], "displayName": "Readme User",
         "createdAt": "1600000000000", "providerUserInfo": [{"providerId": "password", "rawId": f"readme-{tag}@example.com"}]},
        {"localId": f"fbOwn{tag}", "email": f"own-{tag}@example.com", "emailVerified": False,
         "passwordHash": firebase_hash("fire-password-2", own_salt), "salt": base64.b64encode(own_salt).decode(),
         "phoneNumber": "+79123456789", "createdAt": "1650000000000",
         "providerUserInfo": [{"providerId": "apple.com", "rawId": f"001234.apple{tag}", "email": f"own-{tag}@privaterelay.appleid.com"},
                              {"providerId": "google.com", "rawId": f"g{tag}"}]},
        {"localId": f"fbPhone{tag}", "phoneNumber": "+79990001122"},
        {"localId": f"fbBad{tag}", "email": f"bad-{tag}@example.com", "phoneNumber": "call me"},
        {"localId": f"fbOff{tag}", "email": f"off-{tag}@example.com", "disabled": True},
        {"localId": f"fbDup{tag}", "email": f"dup-{tag}@example.com",
         "providerUserInfo": [{"providerId": "apple.com", "rawId": f"001234.apple{tag}"}]},
    ]}
    export_file = workdir / f"firebase-{tag}.json"
    export_file.write_text(json.dumps(export))
    config = workdir / f"firebase-{tag}.hash-config"
    config.write_text("hash_config {\n  algorithm: SCRYPT,\n  base64_signer_key: %s,\n  base64_salt_separator: %s,\n"
                      "  rounds: %d,\n  mem_cost: %d,\n}\n" % (FIREBASE_README["signer_key"], FIREBASE_README["salt_separator"],
                                                                FIREBASE_README["rounds"], FIREBASE_README["mem_cost"]))
    done = run_cli(admin, "users", "import", str(export_file), "--hash-config", str(config), "--provider", "apple.com=apple")
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)  # rows were refused
    assert "imported: 3 created, 0 updated, 3 refused" in done.stdout, done.stdout
    assert re.search(rf"refused: user 6 \(fbDup{tag}\): the apple identity 001234.apple{tag} is linked to another account", done.stderr), done.stderr
    assert re.search(rf"refused: user 3 \(fbPhone{tag}\): has no email address", done.stderr), done.stderr
    assert re.search(rf"refused: user 4 \(fbBad{tag}\): claim 'phone_number' must be a phone number", done.stderr), done.stderr
    for secret in (FIREBASE_README["hash"], export["users"][1]["passwordHash"], FIREBASE_README["signer_key"][:20]):
        assert secret not in done.stdout + done.stderr

    # The account keeps Firebase's uid (the `sub` apps stored), its name and creation time.
    readme = call(admin, "GET", f"/users/fbReadme{tag}").json()
    assert readme["email"] == f"readme-{tag}@example.com" and readme["profile"]["name"] == "Readme User"
    assert readme["created_at"] == 1600000000 and readme["has_password"] is True and readme["email_verified"] is True
    assert call(admin, "GET", f"/users/fbOff{tag}").json()["disabled"] is True
    own = call(admin, "GET", f"/users/fbOwn{tag}").json()
    assert own["profile"]["phone_number"] == "+79123456789"
    # Only the providers named are linked.
    assert [(i["provider"], i["subject"]) for i in own["identities"]] == [("apple", f"001234.apple{tag}")], own["identities"]

    # The old passwords work; the first sign-in re-hashes them with Tessera's scrypt.
    assert signs_in(admin, f"readme-{tag}@example.com", "not-the-password").kind == "login"
    signed_in = signs_in(admin, f"readme-{tag}@example.com", FIREBASE_README["password"])
    assert signed_in.kind == "redirect", signed_in.describe()
    tokens = assert_tokens(admin["provider"].redeem(admin["app"], signed_in))
    assert admin["provider"].verify_id_token(tokens["id_token"], admin["app"])["sub"] == f"fbReadme{tag}"
    stored = query_rows(admin["database"], "SELECT password_hash FROM users WHERE id = ?", (f"fbReadme{tag}",))[0][0]
    assert stored.startswith("$scrypt$"), stored[:20]
    assert signs_in(admin, f"own-{tag}@example.com", "fire-password-2").kind == "redirect"

    # Importing again changes nothing twice, and never replaces a password Tessera now holds.
    again = run_cli(admin, "users", "import", str(export_file), "--hash-config", str(config), "--provider", "apple.com=apple", "--json")
    report = json.loads(again.stdout)
    assert (report["created"], report["updated"], report["refused"]) == (0, 3, 3), report
    assert query_rows(admin["database"], "SELECT password_hash FROM users WHERE id = ?", (f"fbReadme{tag}",))[0][0] == stored
    assert signs_in(admin, f"readme-{tag}@example.com", FIREBASE_README["password"]).kind == "redirect"
    # Without the project's parameters the password rows are refused, not imported without a password.
    bare = run_cli(admin, "users", "import", str(export_file), "--json")
    assert "no hash configuration was given" in json.dumps(json.loads(bare.stdout)["failures"])


def test_phc_hashes_from_other_systems_are_imported_through_the_api_and_keep_working(admin):
    import argon2
    import base64
    import bcrypt
    import hashlib

    tag = random_token(4).lower()
    salt = os.urandom(16)
    pbkdf2 = "$pbkdf2-sha256$29000$%s$%s" % (
        base64.b64encode(salt).decode().rstrip("=").replace("+", "."),
        base64.b64encode(hashlib.pbkdf2_hmac("sha256", b"pbkdf2-password-3", salt, 29000)).decode().rstrip("=").replace("+", "."))
    rows = [
        {"email": f"bc-{tag}@example.com", "password_hash": bcrypt.hashpw(b"bcrypt-password-1", bcrypt.gensalt(rounds=5)).decode(),
         "name": "Bea Crypt", "email_verified": True},
        {"email": f"ar-{tag}@example.com", "id": f"argon-{tag}",
         "password_hash": argon2.PasswordHasher(time_cost=2, memory_cost=1024, parallelism=2).hash("argon2-password-2"),
         "profile": {"address_reg": {"full_address": "Москва, ул. Тверская, д. 1", "city": "Москва", "street": "Тверская",
                                     "house": "1", "building": "", "bulk": "", "settlement": ""}}},
        {"email": f"pb-{tag}@example.com", "password_hash": pbkdf2},
        {"email": f"md5-{tag}@example.com", "password_hash": "$1$abcdefgh$0123456789abcdefghijkl"},
        {"email": f"cost-{tag}@example.com", "password_hash": "$2b$20$" + "a" * 53},
    ]
    answer = call(admin, "POST", "/users/import", json={"format": "jsonl", "data": "\n".join(json.dumps(r) for r in rows)})
    conforms(answer, "/admin/v1/users/import", "POST")
    report = answer.json()
    assert (report["created"], report["refused"]) == (3, 2), report
    reasons = {f["line"]: f["reason"] for f in report["failures"]}
    assert "not in a supported format" in reasons[4] and "bcrypt cost must be 4 to 13" in reasons[5], reasons
    assert "$1$abcdefgh" not in answer.text and rows[0]["password_hash"] not in answer.text
    # An address without a building number is accepted; the empty members are dropped.
    address = call(admin, "GET", f"/users/argon-{tag}").json()["profile"]["address_reg"]
    assert "building" not in address and address["house"] == "1"
    for email, password in ((f"bc-{tag}@example.com", "bcrypt-password-1"), (f"ar-{tag}@example.com", "argon2-password-2"),
                            (f"pb-{tag}@example.com", "pbkdf2-password-3")):
        assert signs_in(admin, email, password + "x").kind == "login"
        assert signs_in(admin, email, password).kind == "redirect", email
    # CSV, through the CLI and the running server.
    csv_file = admin["cli"].workdir / f"users-{tag}.csv"
    csv_file.write_text("email,name,password_hash,email_verified\n"
                        f"csv-{tag}@example.com,\"Csv, Person\",{bcrypt.hashpw(b'csv-password-4', bcrypt.gensalt(rounds=4)).decode()},true\n")
    done = run_cli(admin, "users", "import", str(csv_file), server=True)
    assert done.returncode == 0 and "imported: 1 created, 0 updated, 0 refused" in done.stdout, (done.stdout, done.stderr)
    assert call(admin, "GET", f"/users/csv-{tag}@example.com").json()["profile"]["name"] == "Csv, Person"
    assert signs_in(admin, f"csv-{tag}@example.com", "csv-password-4").kind == "redirect"
    # No hash in the server's log.
    log = admin["server"].log()
    assert all(r["password_hash"] not in log for r in rows[:3])


# ---------------------------------------------------------------------------
# Fuzzing


OWN_CLIENT_ENV = "ADMIN_FUZZ_OWN_CLIENT"


def test_schemathesis_finds_no_server_error_and_no_answer_off_the_document(admin, workdir):
    """Every operation but key rotation, in the examples (the document's own, none skipped),
    coverage and fuzzing phases, with the admin token. schemathesis puts the ids it reads in
    answers into later requests; the hooks below keep it from deleting or changing the client
    whose token the run uses, so that the token works to the end."""
    from test_api_fuzz import assert_no_operation_skipped, schemathesis_options

    checks = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
    events = workdir / "admin-fuzz.ndjson"
    options = schemathesis_options(json.loads(ADMIN_DOC.read_text()), workdir / "admin-schemathesis.toml")
    command = [str(Path(sys.executable).with_name("schemathesis")), *options, "run", str(ADMIN_DOC), "--url", admin["server"].issuer,
               "--header", f"Authorization: Bearer {admin['token']}", "--checks", checks, "--max-examples", "25",
               "--phases", "examples,coverage,fuzzing", "--seed", "20261126", "--no-shrink", "--generation-database", "none",
               "--workers", "1", "--request-timeout", "30", "--no-color", "--exclude-path", "/admin/v1/keys/rotate",
               "--report", "ndjson", "--report-ndjson-path", str(events)]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": Path(__file__).stem, OWN_CLIENT_ENV: admin["ops"].client_id,
           "PYTHONPATH": str(Path(__file__).parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"schemathesis found problems:\n{done.stdout[-6000:]}\n{done.stderr[-2000:]}"
    assert_no_operation_skipped(done.stdout, events)
    assert call(admin, "GET", "/clients").status_code == 200, "the run's admin token stopped working"


def _install_admin_fuzz_hooks(own_client: str) -> None:
    import schemathesis

    @schemathesis.hook
    def before_call(context, case, kwargs):
        """A request naming the run's own client (an id read from a listing) names the example
        client instead: deleting it, or taking its tessera:admin scope away, would end the run's token."""
        if case.operation.path.startswith("/admin/v1/clients/") and (case.path_parameters or {}).get("id") == own_client:
            case.path_parameters = {**case.path_parameters, "id": "example-web-app"}


if os.environ.get(OWN_CLIENT_ENV) and os.environ.get("SCHEMATHESIS_HOOKS") == Path(__file__).stem:
    _install_admin_fuzz_hooks(os.environ[OWN_CLIENT_ENV])
