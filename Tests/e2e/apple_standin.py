"""A local stand-in for Apple's Sign in with Apple REST API, faithful to what Apple
documents (https://developer.apple.com/documentation/sign_in_with_apple/sign_in_with_apple_rest_api)
and to what Apple's servers are seen to do:

- `GET /auth/authorize`: checks the client (a Services ID) and its registered return URLs;
  an error page, never a redirect, for an unknown client or URL. `response_mode=form_post`
  is required when `name` or `email` is asked for. The page lets the user continue as the
  account the test chose (`next_account`) or cancel; continuing answers the auto-submitting
  form POST to the return URL with `code`, `state`, `id_token` (when asked) and the `user`
  JSON, which Apple sends only on the first authorization of a (client, user) pair.
- `POST /auth/token`: the client secret is an ES256 JWT signed with the team's key
  (`kid`, `iss` team id, `sub` client id, `aud` https://appleid.apple.com, at most 6 months);
  codes are single use and live 5 minutes; answers RS256 ID tokens with Apple's claims.
  Errors are 400 with `{"error": ...}`, `invalid_client` included, as Apple does.
- `GET /auth/keys`: the JWKS; `rotate_key()` adds a new key.
- `POST /auth/revoke`: same client authentication; revocations are recorded.
- Server-to-server notifications (`notify`): `{"payload": JWS}` with the `events` claim a
  JSON string.
- Native apps (AuthenticationServices): `native_authorization` gives what the iOS app gets
  (identity token with the SHA-256 hex of the raw nonce, authorization code, user JSON);
  `identity_token` crafts tokens, tampered ones included.

The browser-facing endpoint is served on `localhost` while the server-facing ones are on
127.0.0.1, so that the form POST back to a 127.0.0.1 relying party is cross-site, as
Apple's is (SameSite=Lax cookies are not sent with it).

Everything it received is recorded (`authorizations`, `token_requests`, `revocations`) for
tests to assert on.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, RSAKey

APPLE_AUDIENCE = "https://appleid.apple.com"
CLIENT_SECRET_MAX_LIFETIME = 15777000  # six months, Apple's limit on exp - iat
CODE_LIFETIME = 300  # "valid for five minutes"
ACCESS_TOKEN_LIFETIME = 3600
ID_TOKEN_LIFETIME = 600


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def half_hash(value: str) -> str:
    """at_hash / c_hash for RS256 (OpenID Connect Core §3.1.3.6)."""
    return b64url(hashlib.sha256(value.encode()).digest()[:16])


def nonce_hash(raw_nonce: str) -> str:
    """What an iOS app puts in `ASAuthorizationAppleIDRequest.nonce`: SHA-256 of the raw nonce, hex."""
    return hashlib.sha256(raw_nonce.encode()).hexdigest()


def flip_signature(token: str) -> str:
    """The same JWS with one bit of its signature changed."""
    head, payload, signature = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[len(raw) // 2] ^= 0x01
    return f"{head}.{payload}.{b64url(bytes(raw))}"


def decode_unverified(token: str) -> tuple[dict, dict]:
    head, payload = token.split(".")[:2]
    return (json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))),
            json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


@dataclass
class AppleAccount:
    """An Apple ID as one team sees it: Apple's `sub` is per team."""
    key: str
    sub: str
    email: str
    given_name: str | None = None
    family_name: str | None = None
    is_private_email: bool = False
    email_verified: bool = True
    real_user_status: int = 2  # "likely real"


@dataclass
class AppleClient:
    """A Services ID (web, with return URLs) or an App ID (native, none)."""
    client_id: str
    team_id: str
    redirect_uris: list[str] = field(default_factory=list)


@dataclass
class IssuedCode:
    code: str
    client_id: str
    account: AppleAccount
    redirect_uri: str | None
    nonce: str | None
    scopes: list[str]
    expires_at: float
    used: bool = False


@dataclass
class RefreshToken:
    token: str
    client_id: str
    account: AppleAccount
    nonce: str | None
    revoked: bool = False


class AppleStandIn:
    def __init__(self, *, issuer: str | None = None, email_verified_style: Any = True, browser_host: str = "localhost"):
        """email_verified_style: True (booleans, what Apple sends today) or "string" ("true"/"false",
        what older tokens carried) for email_verified and is_private_email."""
        self.lock = threading.RLock()
        self.clients: dict[str, AppleClient] = {}
        self.team_keys: dict[tuple[str, str], ECKey] = {}  # (team id, key id) -> public key
        self.accounts: dict[str, AppleAccount] = {}
        self.next_account: str | None = None
        self.email_verified_style = email_verified_style
        self.authorized_pairs: set[tuple[str, str]] = set()  # (client id, sub) that already got `user`
        self.codes: dict[str, IssuedCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.access_tokens: dict[str, tuple[str, str]] = {}  # token -> (client id, sub)
        self.pending: dict[str, dict[str, str]] = {}  # authorization requests shown to the user
        self.authorizations: list[dict[str, str]] = []  # every GET /auth/authorize query
        self.token_requests: list[dict[str, Any]] = []
        self.revocations: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.keys: list[tuple[str, RSAKey]] = []  # (kid, key), newest last; all are published
        # Tests set these to make the next /auth/token answer carry a tampered ID token:
        # keyword arguments of identity_token (e.g. {"extra": {"nonce": "x"}}), or a broken signature.
        self.tamper_next_id_token: dict | None = None
        self.break_next_id_token_signature = False
        self.rotate_key()

        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def _form(self) -> dict[str, str]:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode()
                return {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}

            def do_GET(self):
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
                if parts.path == "/auth/authorize":
                    status, body, headers = outer._authorize(query)
                    self._send(status, body.encode(), "text/html; charset=utf-8", headers)
                elif parts.path == "/auth/keys":
                    self._send(200, json.dumps(outer.jwks()).encode(), "application/json")
                else:
                    self._send(404, b"not found", "text/plain")

            def do_POST(self):
                path = urlsplit(self.path).path
                form = self._form()
                if path == "/auth/authorize/continue":
                    status, body, headers = outer._continue(form)
                    self._send(status, body.encode(), "text/html; charset=utf-8", headers)
                elif path == "/auth/token":
                    status, answer = outer._token(form, dict(self.headers))
                    self._send(status, json.dumps(answer).encode(), "application/json",
                               {"Cache-Control": "no-store", "Pragma": "no-cache"})
                elif path == "/auth/revoke":
                    status, answer = outer._revoke(form)
                    self._send(status, json.dumps(answer).encode() if answer else b"", "application/json")
                else:
                    self._send(404, b"not found", "text/plain")

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.browser_base = f"http://{browser_host}:{self.port}"
        self.issuer = issuer or self.base
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True, name="apple-standin")

    # -- lifecycle and configuration

    def start(self) -> "AppleStandIn":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def endpoints(self) -> dict[str, str]:
        """The endpoint settings of an `apple` upstream provider pointing here."""
        return {"issuer": self.issuer, "authorization_endpoint": self.browser_base + "/auth/authorize",
                "token_endpoint": self.base + "/auth/token", "jwks_uri": self.base + "/auth/keys",
                "revocation_endpoint": self.base + "/auth/revoke"}

    def register_client(self, client_id: str, team_id: str, redirect_uris: list[str] = ()) -> AppleClient:
        with self.lock:
            client = AppleClient(client_id, team_id, list(redirect_uris))
            self.clients[client_id] = client
            return client

    def generate_team_key(self, directory: Path, team_id: str, key_id: str) -> Path:
        """Makes the team's Sign in with Apple key as the developer portal does: an ES256
        private key in a PKCS #8 PEM file `AuthKey_{key_id}.p8`; registers its public key."""
        private = ec.generate_private_key(ec.SECP256R1())
        pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        path = Path(directory) / f"AuthKey_{key_id}.p8"
        path.write_bytes(pem)
        path.chmod(0o600)
        public_pem = private.public_key().public_bytes(serialization.Encoding.PEM,
                                                       serialization.PublicFormat.SubjectPublicKeyInfo)
        with self.lock:
            self.team_keys[(team_id, key_id)] = ECKey.import_key(public_pem)
        return path

    def add_account(self, key: str, email: str, given_name: str | None = None, family_name: str | None = None,
                    *, is_private_email: bool = False, email_verified: bool = True, sub: str | None = None) -> AppleAccount:
        """An Apple ID. `sub` looks like Apple's: 000123.{32 hex}.0456."""
        sub = sub or f"{secrets.randbelow(10**6):06d}.{uuid.uuid4().hex}.{secrets.randbelow(10**4):04d}"
        account = AppleAccount(key, sub, email, given_name, family_name, is_private_email, email_verified)
        with self.lock:
            self.accounts[key] = account
        return account

    def forget_authorization(self, client_id: str, account: AppleAccount) -> None:
        """As when the user stops using Sign in with Apple with the app: the next authorization
        is a first one again (the `user` JSON comes again)."""
        with self.lock:
            self.authorized_pairs.discard((client_id, account.sub))

    def rotate_key(self, keep_old: bool = True) -> str:
        """A new signing key, published in the JWKS (with the old ones unless keep_old=False)."""
        kid = "standin-" + secrets.token_hex(4)
        with self.lock:
            if not keep_old:
                self.keys.clear()
            self.keys.append((kid, RSAKey.generate_key(2048)))
        return kid

    def jwks(self) -> dict:
        with self.lock:
            keys = []
            for kid, key in self.keys:
                public = key.as_dict(private=False)
                public.update(kid=kid, use="sig", alg="RS256")
                keys.append(public)
            return {"keys": keys}

    @property
    def current_kid(self) -> str:
        return self.keys[-1][0]

    # -- tokens

    def _bool(self, value: bool) -> Any:
        if self.email_verified_style == "string":
            return "true" if value else "false"
        return bool(value)

    def identity_token(self, account: AppleAccount, audience: str, *, nonce: str | None = None,
                       access_token: str | None = None, code: str | None = None, now: int | None = None,
                       lifetime: int = ID_TOKEN_LIFETIME, iat: int | None = None, exp: int | None = None,
                       issuer: str | None = None, kid: str | None = None, key: RSAKey | None = None,
                       extra: dict | None = None, drop: tuple[str, ...] = (), alg: str = "RS256") -> str:
        """An ID token as Apple signs it. The keyword arguments make tampered ones: another
        audience, `exp` in the past, a key Apple never published (`key=` with `kid=`), ...
        `flip_signature()` breaks the signature of any of them."""
        now = int(time.time()) if now is None else now
        iat = now if iat is None else iat
        claims: dict[str, Any] = {
            "iss": issuer or self.issuer, "aud": audience, "exp": exp if exp is not None else iat + lifetime, "iat": iat,
            "sub": account.sub, "email": account.email, "email_verified": self._bool(account.email_verified),
            "is_private_email": self._bool(account.is_private_email), "auth_time": iat, "nonce_supported": True,
            "real_user_status": account.real_user_status,
        }
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["at_hash"] = half_hash(access_token)
        if code is not None:
            claims["c_hash"] = half_hash(code)
        claims.update(extra or {})
        for name in drop:
            claims.pop(name, None)
        if key is None:
            with self.lock:
                default_kid, key = self.keys[-1]
            kid = kid or default_kid
        return jwt.encode({"alg": alg, "kid": kid or "unknown-kid"}, claims, key, algorithms=[alg])

    def issue_code(self, client_id: str, account: AppleAccount, *, redirect_uri: str | None = None,
                   nonce: str | None = None, scopes: list[str] = (), lifetime: int = CODE_LIFETIME) -> str:
        # Apple's codes look like c0123abcd....0.abcd.XYZ; any opaque string will do.
        code = "c" + secrets.token_hex(16) + ".0.nrxuq." + secrets.token_urlsafe(16)
        with self.lock:
            self.codes[code] = IssuedCode(code, client_id, account, redirect_uri, nonce, list(scopes),
                                          time.time() + lifetime)
        return code

    def native_authorization(self, client_id: str, account: AppleAccount, raw_nonce: str,
                             scopes: tuple[str, ...] = ("name", "email")) -> dict[str, Any]:
        """What AuthenticationServices hands an iOS app (bundle id `client_id`) after the user
        continues: `identity_token` (aud the bundle id, nonce the SHA-256 hex of the raw nonce,
        c_hash of the code), `authorization_code` (for /auth/token, no redirect_uri), and the
        name and email only on the first authorization, as `user` JSON shaped like the web one."""
        hashed = nonce_hash(raw_nonce)
        code = self.issue_code(client_id, account, nonce=hashed, scopes=list(scopes))
        token = self.identity_token(account, client_id, nonce=hashed, code=code)
        return {"identity_token": token, "authorization_code": code, "user": self._user_json(client_id, account, scopes),
                "raw_nonce": raw_nonce, "nonce": hashed}

    def _user_json(self, client_id: str, account: AppleAccount, scopes) -> str | None:
        with self.lock:
            first = (client_id, account.sub) not in self.authorized_pairs
            self.authorized_pairs.add((client_id, account.sub))
        if not first or not scopes:
            return None
        user: dict[str, Any] = {}
        if "name" in scopes:
            user["name"] = {"firstName": account.given_name or "", "lastName": account.family_name or ""}
        if "email" in scopes:
            user["email"] = account.email
        return json.dumps(user) if user else None

    # -- GET /auth/authorize and the user's answer

    def _error_page(self, status: int, error: str, description: str) -> tuple[int, str, dict]:
        body = (f"<!doctype html><html><head><title>Sign in with Apple: {html.escape(error)}</title></head><body>"
                f"<h1 id=\"error\">{html.escape(error)}</h1><p>{html.escape(description)}</p></body></html>")
        return status, body, {}

    def _authorize(self, query: dict[str, str]) -> tuple[int, str, dict]:
        with self.lock:
            self.authorizations.append(dict(query))
        client = self.clients.get(query.get("client_id", ""))
        if client is None:
            return self._error_page(400, "invalid_client", "Invalid client id or web redirect url.")
        if query.get("redirect_uri") not in client.redirect_uris:
            return self._error_page(400, "invalid_request", "Invalid web redirect url.")
        response_type = set(query.get("response_type", "").split())
        if response_type not in ({"code"}, {"code", "id_token"}):
            return self._error_page(400, "unsupported_response_type", "Invalid response_type.")
        scopes = [s for s in query.get("scope", "").split() if s]
        if any(s not in ("name", "email", "openid") for s in scopes):
            return self._error_page(400, "invalid_scope", "Invalid scope.")
        mode = query.get("response_mode") or ("fragment" if "id_token" in response_type else "query")
        if mode not in ("query", "fragment", "form_post"):
            return self._error_page(400, "invalid_request", "Invalid response_mode.")
        if set(scopes) & {"name", "email"} and mode != "form_post":
            return self._error_page(400, "invalid_request",
                                    "response_mode must be form_post when name or email scope is requested.")
        if "id_token" in response_type and mode == "query":
            return self._error_page(400, "invalid_request", "response_mode query is not allowed with id_token.")
        with self.lock:
            account = self.accounts.get(self.next_account or "")
        if account is None:
            return self._error_page(500, "standin_misconfigured", "The test did not choose an account (next_account).")
        request_id = secrets.token_urlsafe(16)
        with self.lock:
            self.pending[request_id] = {**query, "response_mode": mode, "_account": account.key}
        who = html.escape(account.email)
        body = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in with Apple</title>
<style>body{{font-family:-apple-system,Helvetica,sans-serif;background:#f5f5f7;text-align:center;padding-top:60px}}
main{{background:#fff;display:inline-block;padding:32px 48px;border-radius:16px}}
button{{font-size:17px;padding:10px 28px;border-radius:8px;border:0;margin:6px}}
#continue{{background:#000;color:#fff}}</style></head>
<body><main><h1>Sign in with Apple</h1><p>Use your Apple ID <strong id="apple-id">{who}</strong> to sign in to
<strong>{html.escape(client.client_id)}</strong>.</p>
<form method="post" action="/auth/authorize/continue"><input type="hidden" name="request_id" value="{request_id}">
<button type="submit" id="continue" name="decision" value="continue">Continue</button>
<button type="submit" id="cancel" name="decision" value="cancel">Cancel</button></form></main></body></html>"""
        return 200, body, {"Cache-Control": "no-store"}

    def _continue(self, form: dict[str, str]) -> tuple[int, str, dict]:
        with self.lock:
            request = self.pending.pop(form.get("request_id", ""), None)
        if request is None:
            return self._error_page(400, "invalid_request", "This request has expired.")
        account = self.accounts[request["_account"]]
        client_id, redirect_uri = request["client_id"], request["redirect_uri"]
        params: dict[str, str] = {}
        if form.get("decision") != "continue":
            params["error"] = "user_cancelled_authorize"
        else:
            scopes = [s for s in request.get("scope", "").split() if s]
            code = self.issue_code(client_id, account, redirect_uri=redirect_uri, nonce=request.get("nonce"),
                                   scopes=scopes)
            params["code"] = code
            if "id_token" in request.get("response_type", "").split():
                params["id_token"] = self.identity_token(account, client_id, nonce=request.get("nonce"), code=code)
            user = self._user_json(client_id, account, scopes)
            if user is not None:
                params["user"] = user
        if request.get("state") is not None:
            params["state"] = request["state"]
        mode = request["response_mode"]
        if mode == "form_post":
            inputs = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                             for k, v in params.items())
            body = (f"<!doctype html><html><head><title>Signing in…</title></head><body>"
                    f"<form id=\"apple-response\" method=\"post\" action=\"{html.escape(redirect_uri)}\">{inputs}"
                    f"<noscript><button type=\"submit\">Continue</button></noscript></form>"
                    f"<script>document.getElementById('apple-response').submit()</script></body></html>")
            return 200, body, {"Cache-Control": "no-store"}
        separator = "#" if mode == "fragment" else ("&" if "?" in redirect_uri else "?")
        return 302, "", {"Location": redirect_uri + separator + urlencode(params)}

    # -- client authentication (token and revoke)

    def check_client_secret(self, client_id: str, secret: str) -> tuple[bool, str, dict]:
        """(valid, reason, claims): the ES256 JWT Apple asks for as client_secret."""
        client = self.clients.get(client_id)
        if client is None:
            return False, "unknown client_id", {}
        try:
            header, claims = decode_unverified(secret)
        except Exception:  # noqa: BLE001 - any malformed secret is invalid_client
            return False, "client_secret is not a JWT", {}
        if header.get("alg") != "ES256":
            return False, f"alg {header.get('alg')!r} is not ES256", claims
        key = self.team_keys.get((claims.get("iss"), header.get("kid")))
        if key is None:
            return False, f"no key {header.get('kid')!r} of team {claims.get('iss')!r}", claims
        if claims.get("iss") != client.team_id:
            return False, f"iss {claims.get('iss')!r} is not the team of {client_id}", claims
        try:
            jwt.decode(secret, key, algorithms=["ES256"])
        except JoseError as error:
            return False, f"signature: {error}", claims
        now = time.time()
        aud = claims.get("aud")
        if aud != APPLE_AUDIENCE and not (isinstance(aud, list) and APPLE_AUDIENCE in aud):
            return False, f"aud {aud!r}", claims
        if claims.get("sub") != client_id:
            return False, f"sub {claims.get('sub')!r} is not the client_id", claims
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, (int, float)) or not isinstance(exp, (int, float)):
            return False, "iat and exp must be numbers", claims
        if iat > now + 60:
            return False, "iat in the future", claims
        if exp <= now:
            return False, "expired", claims
        if exp - iat > CLIENT_SECRET_MAX_LIFETIME:
            return False, f"exp - iat = {exp - iat} s is more than 6 months", claims
        return True, "ok", claims

    # -- POST /auth/token

    def _token(self, form: dict[str, str], headers: dict[str, str]) -> tuple[int, dict]:
        record: dict[str, Any] = {"form": dict(form), "at": time.time()}
        with self.lock:
            self.token_requests.append(record)
        status, answer = self._token_answer(form, record)
        record["status"], record["answer"] = status, answer
        return status, answer

    def _token_answer(self, form: dict[str, str], record: dict) -> tuple[int, dict]:
        client_id, secret, grant = form.get("client_id"), form.get("client_secret"), form.get("grant_type")
        if not client_id or not secret or not grant:
            return 400, {"error": "invalid_request"}
        valid, reason, claims = self.check_client_secret(client_id, secret)
        record["client_secret_claims"], record["client_secret_check"] = claims, reason
        if not valid:
            return 400, {"error": "invalid_client"}
        now = int(time.time())
        if grant == "authorization_code":
            with self.lock:
                issued = self.codes.get(form.get("code", ""))
                if issued is None or issued.used or issued.expires_at < time.time() or issued.client_id != client_id:
                    reason = ("unknown code" if issued is None else "code already used" if issued.used
                              else "code expired" if issued.expires_at < time.time() else "code of another client")
                    record["reason"] = reason
                    if issued is not None:
                        issued.used = True
                    return 400, {"error": "invalid_grant", "error_description": "The code has expired or has been revoked."}
                issued.used = True
            if issued.redirect_uri is not None and form.get("redirect_uri") != issued.redirect_uri:
                record["reason"] = f"redirect_uri {form.get('redirect_uri')!r} is not {issued.redirect_uri!r}"
                return 400, {"error": "invalid_grant", "error_description": "redirect_uri mismatch"}
            if issued.redirect_uri is None and form.get("redirect_uri"):
                # A code from an app (AuthenticationServices) is validated without a redirect URI.
                record["reason"] = "redirect_uri sent for a code issued to an app"
                return 400, {"error": "invalid_grant", "error_description": "redirect_uri not expected"}
            access = "a" + secrets.token_hex(16) + ".0.nrxuq." + secrets.token_urlsafe(16)
            refresh = "r" + secrets.token_hex(16) + ".0.nrxuq." + secrets.token_urlsafe(16)
            with self.lock:
                self.refresh_tokens[refresh] = RefreshToken(refresh, client_id, issued.account, issued.nonce)
                self.access_tokens[access] = (client_id, issued.account.sub)
            with self.lock:
                tamper, self.tamper_next_id_token = self.tamper_next_id_token, None
                flip, self.break_next_id_token_signature = self.break_next_id_token_signature, False
            kwargs = {"nonce": issued.nonce, "access_token": access, "now": now, **(tamper or {})}
            id_token = self.identity_token(issued.account, kwargs.pop("audience", client_id), **kwargs)
            if flip:
                id_token = flip_signature(id_token)
            record["tampered"] = bool(tamper or flip)
            return 200, {"access_token": access, "token_type": "Bearer", "expires_in": ACCESS_TOKEN_LIFETIME,
                         "refresh_token": refresh, "id_token": id_token}
        if grant == "refresh_token":
            with self.lock:
                stored = self.refresh_tokens.get(form.get("refresh_token", ""))
            if stored is None or stored.revoked or stored.client_id != client_id:
                record["reason"] = "unknown or revoked refresh token"
                return 400, {"error": "invalid_grant"}
            access = "a" + secrets.token_hex(16) + ".0.nrxuq." + secrets.token_urlsafe(16)
            with self.lock:
                self.access_tokens[access] = (client_id, stored.account.sub)
            id_token = self.identity_token(stored.account, client_id, access_token=access, now=now)
            # Apple answers a refresh without a new refresh token.
            return 200, {"access_token": access, "token_type": "Bearer", "expires_in": ACCESS_TOKEN_LIFETIME,
                         "id_token": id_token}
        return 400, {"error": "unsupported_grant_type"}

    # -- POST /auth/revoke

    def _revoke(self, form: dict[str, str]) -> tuple[int, dict | None]:
        record: dict[str, Any] = {"form": dict(form), "token": form.get("token"),
                                  "token_type_hint": form.get("token_type_hint"), "client_id": form.get("client_id"),
                                  "at": time.time()}
        with self.lock:
            self.revocations.append(record)
        client_id, secret, token = form.get("client_id"), form.get("client_secret"), form.get("token")
        if not client_id or not secret or not token:
            record["status"] = 400
            return 400, {"error": "invalid_request"}
        valid, reason, claims = self.check_client_secret(client_id, secret)
        record["client_secret_valid"], record["client_secret_check"], record["client_secret_claims"] = valid, reason, claims
        if not valid:
            record["status"] = 400
            return 400, {"error": "invalid_client"}
        with self.lock:
            stored = self.refresh_tokens.get(token)
            if stored is not None and stored.client_id == client_id:
                stored.revoked = True
                record["revoked"] = "refresh_token"
                self.authorized_pairs.discard((client_id, stored.account.sub))
            elif token in self.access_tokens and self.access_tokens[token][0] == client_id:
                del self.access_tokens[token]
                record["revoked"] = "access_token"
            else:
                record["revoked"] = None  # unknown tokens are answered 200 too (RFC 7009 §2.2)
        record["status"] = 200
        return 200, None

    def revoked_refresh_tokens(self) -> set[str]:
        with self.lock:
            return {r["token"] for r in self.revocations if r.get("revoked") == "refresh_token"}

    def refresh_tokens_of(self, account: AppleAccount, client_id: str | None = None) -> list[str]:
        with self.lock:
            return [t.token for t in self.refresh_tokens.values()
                    if t.account.sub == account.sub and (client_id is None or t.client_id == client_id)]

    # -- server-to-server notifications

    def notification_payload(self, client_id: str, event_type: str, account: AppleAccount, *,
                             key: RSAKey | None = None, kid: str | None = None, issuer: str | None = None,
                             email: str | None = None, now: int | None = None, extra_event: dict | None = None) -> str:
        """The JWS Apple posts: `events` is a JSON string (one event), event_time in milliseconds."""
        now = int(time.time()) if now is None else now
        event: dict[str, Any] = {"type": event_type, "sub": account.sub, "event_time": now * 1000}
        if event_type in ("email-disabled", "email-enabled"):
            event["email"] = email or account.email
            event["is_private_email"] = self._bool(account.is_private_email)
        event.update(extra_event or {})
        claims = {"iss": issuer or self.issuer, "aud": client_id, "iat": now, "exp": now + 86400,
                  "jti": secrets.token_urlsafe(16), "events": json.dumps(event)}
        if key is None:
            with self.lock:
                default_kid, key = self.keys[-1]
            kid = kid or default_kid
        return jwt.encode({"alg": "RS256", "kid": kid or "unknown-kid"}, claims, key, algorithms=["RS256"])

    def notify(self, url: str, payload: str, timeout: float = 30):
        """POSTs `{"payload": JWS}` as Apple does; returns the requests.Response."""
        import requests
        response = requests.post(url, json={"payload": payload}, timeout=timeout)
        with self.lock:
            self.notifications.append({"url": url, "payload": payload, "status": response.status_code})
        return response
