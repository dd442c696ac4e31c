#!/usr/bin/env python3
"""Obtains refresh tokens through Tessera's real authorization code flow.

Usage: refresh_tokens.py ISSUER CLIENT_ID CLIENT_SECRET REDIRECT_URI EMAIL PASSWORD COUNT

Prints COUNT refresh tokens, one a line, each from its own grant (its own rotation
family). The first one signs in through the hosted login page (GET /authorize, POST
/login with the CSRF cookie); the others reuse the browser session cookie, so GET
/authorize redirects straight back with a code. Endpoints come from discovery.

Standard library only: this runs on a fresh machine without a venv.
"""

import base64
import http.client
import json
import re
import sys
import urllib.parse


class Browser:
    """A minimal cookie-keeping HTTP client that never follows redirects."""

    def __init__(self, issuer):
        parsed = urllib.parse.urlsplit(issuer)
        if parsed.scheme != "http":
            raise SystemExit(f"refresh_tokens.py: only http issuers are supported here, not {issuer}")
        self.host = parsed.hostname
        self.port = parsed.port or 80
        self.cookies = {}

    def request(self, method, url, body=None, headers=None):
        parsed = urllib.parse.urlsplit(url)
        path = parsed.path + (("?" + parsed.query) if parsed.query else "")
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            data = response.read()
            for name, value in response.getheaders():
                if name.lower() == "set-cookie":
                    pair = value.split(";", 1)[0]
                    key, _, val = pair.partition("=")
                    if val:
                        self.cookies[key.strip()] = val.strip()
                    else:
                        self.cookies.pop(key.strip(), None)
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            connection.close()


def hidden_input(html, name):
    for tag in re.findall(r"<input\b[^>]*>", html):
        if re.search(rf'\bname="{re.escape(name)}"', tag):
            match = re.search(r'\bvalue="([^"]*)"', tag)
            if match:
                return match.group(1).replace("&amp;", "&").replace("&quot;", '"')
    raise SystemExit(f"refresh_tokens.py: the login page has no hidden input '{name}'")


def code_from(location, redirect_uri):
    if not location or not location.startswith(redirect_uri):
        raise SystemExit(f"refresh_tokens.py: expected a redirect to {redirect_uri}, got Location: {location!r}")
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)
    if "code" not in query:
        raise SystemExit(f"refresh_tokens.py: the redirect carries no code: {location}")
    return query["code"][0]


def main():
    if len(sys.argv) != 8:
        raise SystemExit(__doc__)
    issuer, client_id, secret, redirect_uri, email, password, count = sys.argv[1:]
    count = int(count)
    browser = Browser(issuer)

    status, _, body = browser.request("GET", issuer + "/.well-known/openid-configuration")
    if status != 200:
        raise SystemExit(f"refresh_tokens.py: discovery answered {status}")
    metadata = json.loads(body)
    authorize_url, token_url = metadata["authorization_endpoint"], metadata["token_endpoint"]

    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
        "scope": "openid offline_access", "state": "x",
    }, quote_via=urllib.parse.quote)
    basic = base64.b64encode(
        f"{urllib.parse.quote(client_id, safe='')}:{urllib.parse.quote(secret, safe='')}".encode()).decode()

    tokens = []
    for index in range(count):
        status, headers, body = browser.request("GET", authorize_url + "?" + query)
        if status == 200 and index == 0:
            # The hosted login page: post the form back with the CSRF cookie.
            html = body.decode("utf-8", "replace")
            action = urllib.parse.urljoin(authorize_url, "/login")
            match = re.search(r'<form\b[^>]*\baction="([^"]+)"[^>]*>[\s\S]*?name="password"', html)
            if match:
                action = urllib.parse.urljoin(authorize_url, match.group(1).replace("&amp;", "&"))
            form = urllib.parse.urlencode({
                "interaction": hidden_input(html, "interaction"), "csrf_token": hidden_input(html, "csrf_token"),
                "email": email, "password": password,
            })
            status, headers, body = browser.request(
                "POST", action, body=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
            if status != 303:
                raise SystemExit(f"refresh_tokens.py: POST {action} answered {status}, not 303: {body[:300]!r}")
        elif status not in (302, 303):
            raise SystemExit(f"refresh_tokens.py: GET /authorize answered {status} for login {index + 1}: {body[:300]!r}")
        code = code_from(headers.get("location"), redirect_uri)

        form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri})
        status, _, body = browser.request("POST", token_url, body=form, headers={
            "Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + basic})
        if status != 200:
            raise SystemExit(f"refresh_tokens.py: the code exchange answered {status}: {body[:300]!r}")
        answer = json.loads(body)
        if "refresh_token" not in answer:
            raise SystemExit(f"refresh_tokens.py: no refresh_token in the token response: {sorted(answer)}")
        tokens.append(answer["refresh_token"])

    if len(set(tokens)) != len(tokens):
        raise SystemExit("refresh_tokens.py: got the same refresh token twice")
    print("\n".join(tokens))


if __name__ == "__main__":
    main()
