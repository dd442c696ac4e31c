"""Identity data: the user's profile claims (OpenID Connect Core §5.1 and the Sber ID
catalogue), the scopes that release them (one table), the `claims` request
parameter (Core §5.5), per-client allowed scopes, consent (remembered, re-asked for
new scopes only, sensitive scopes even for first-party clients), the CLI's
validation of profiles, and the account page where the user removes an app's
access. The consent and account pages are also looked at in a real browser;
screenshots go to e2e-artifacts/10-…, 11-…, 12-…."""

from __future__ import annotations

import base64
import html.parser
import json
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

from e2e_support import (PASSWORD, AuthResult, Client, Registry, User, UserAgent, assert_oauth_error, assert_tokens,
                         parse_page, query_url, random_token, s256)

# ---------------------------------------------------------------------------
# The contract: which claims each scope releases

SCOPE_CLAIMS: dict[str, tuple[str, ...]] = {
    # OpenID Connect standard scopes (Core §5.4)
    "openid": (),
    "profile": ("name", "family_name", "given_name", "middle_name", "nickname", "preferred_username", "profile",
                "picture", "website", "gender", "birthdate", "zoneinfo", "locale", "updated_at"),
    "email": ("email", "email_verified"),
    "address": ("address",),
    "phone": ("phone_number", "phone_number_verified"),
    "offline_access": (),
    # The Sber ID catalogue
    "name": ("family_name", "given_name", "middle_name"),
    "birthdate": ("birthdate",),
    "maindoc": ("identification",),
    "inn": ("inn",),
    "snils": ("snils",),
    "mobile": ("phone_number",),
    "gender": ("gender",),
    "driving_license": ("driving_license",),
    "international_passport": ("international_passport",),
    "priority_doc": ("priority_doc",),
    "citizenship": ("citizenship",),
    "place_of_birth": ("place_of_birth",),
    "address_reg": ("address_reg",),
    "work_address": ("work_address",),
    "address_of_actual_residence": ("address_of_actual_residence",),
    "delivery_address": ("delivery_address",),
    "is_company_employee": ("is_company_employee",),
    "sts": ("sts",),
    "is_self_employed": ("is_self_employed",),
    "previous_maindoc": ("previous_identification",),
    "previous_name": ("previous_family_name", "previous_given_name", "previous_middle_name"),
    "education": ("education",),
    "place_of_work": ("place_of_work",),
    "job_title": ("job_title",),
    "marital_status": ("marital_status",),
    "proposition": ("proposition",),
    "salary_status": ("salary_status",),
}
STANDARD_SCOPES = ("openid", "profile", "email", "address", "phone", "offline_access")
CATALOGUE_SCOPES = tuple(s for s in SCOPE_CLAIMS if s not in STANDARD_SCOPES)
USER_CLAIMS = sorted({claim for claims in SCOPE_CLAIMS.values() for claim in claims})
SERVER_MANAGED = ("email", "email_verified", "updated_at")
SENSITIVE_SCOPES = {"maindoc", "inn", "snils", "driving_license", "international_passport", "priority_doc",
                    "citizenship", "place_of_birth", "address_reg", "work_address", "address_of_actual_residence",
                    "delivery_address", "sts", "previous_maindoc", "previous_name", "address"}

# What the consent page says (exactly, or the beginning for the passport line).
DESCRIPTIONS = {
    "en": {"name": "Last name, first name, middle name", "birthdate": "Date of birth",
           "maindoc": "Passport details: ", "inn": "Taxpayer number (INN)"},
    "ru": {"name": "Фамилия, Имя, Отчество", "birthdate": "Дата рождения",
           "maindoc": "Паспортные данные: ", "inn": "ИНН"},
}
TAGS = {"en": {"sensitive": "sensitive", "essential": "required by the app"},
        "ru": {"sensitive": "чувствительные данные", "essential": "обязательно для приложения"}}


def describes(text: str, scope: str, lang: str = "en") -> bool:
    description = DESCRIPTIONS[lang][scope]
    return text.startswith(description) if description.endswith(": ") else text == description


def address(city: str, street: str, house: str, apartment: str) -> dict:
    """A Sber ID address object with every member."""
    return {"full_address": f"Россия, г. {city}, ул. {street}, д. {house}, кв. {apartment}",
            "fias_code": "0c5b2444-70a0-4932-980c-b4dc0d3f02b5", "post_index": "101000", "country": "Россия",
            "region": "г. Москва", "district": "Центральный", "city": city, "settlement": "Внуково", "street": street,
            "house": house, "building": "2", "bulk": "1", "apartment": apartment}


# Every claim a profile can hold, with non-ASCII text, false booleans, nested objects.
FULL_PROFILE = {
    "given_name": "Иван", "family_name": "Петров", "middle_name": "Сергеевич", "nickname": "Ваня",
    "preferred_username": "ivan.petrov", "profile": "https://people.example.com/ivan",
    "picture": "https://people.example.com/ivan.png", "website": "http://ivan.example.org/blog?x=1",
    "gender": 1, "birthdate": "1985-07-14", "zoneinfo": "Europe/Moscow", "locale": "ru-RU",
    "phone_number": "+79161234567", "phone_number_verified": True,
    "address": {"formatted": "ул. Тверская, д. 1, кв. 5\nМосква 125009\nРоссия", "street_address": "ул. Тверская, д. 1, кв. 5",
                "locality": "Москва", "region": "Москва", "postal_code": "125009", "country": "RU"},
    "identification": {"series": "4510", "number": "123456", "issued_by": "ОВД района Арбат г. Москвы",
                       "issued_date": "2005-08-01", "code": "770-001"},
    "inn": {"number": "770123456789"},
    "snils": {"number": "112-233-445 95"},
    "driving_license": {"number": "7712345678"},
    "international_passport": {"series": "75", "number": "1234567", "issued_by": "МВД 77001",
                               "issued_date": "2019-03-01", "planned_end_date": "2029-03-01", "name": "IVAN",
                               "surname": "PETROV"},
    "priority_doc": {"type": 21, "series": "4510", "number": "123456", "issued_by": "ОВД района Арбат",
                     "issued_date": "2005-08-01", "code": "770-001"},
    "citizenship": {"country_code": "RUS", "country_name": "Россия"},
    "place_of_birth": "г. Тула",
    "address_reg": address("Москва", "Тверская", "1", "5"),
    "work_address": address("Москва", "Льва Толстого", "16", "1"),
    "address_of_actual_residence": address("Москва", "Арбат", "10", "7"),
    "delivery_address": {"full_address": "Москва, Арбат 10-7", "post_index": "119002", "city": "Москва"},
    "is_company_employee": True,
    "sts": {"number": "77УВ123456"},
    "is_self_employed": False,
    "previous_identification": {"series": "4503", "number": "654321", "issued_by": "ОВД Тулы",
                                "issued_date": "1999-07-20"},
    "previous_family_name": "Сидоров", "previous_given_name": "Иван", "previous_middle_name": "Сергеевич",
    "education": {"code": "5", "description": "Высшее"},
    "place_of_work": "ООО «Ромашка»", "job_title": "Инженер-программист",
    "marital_status": {"code": "2", "description": "Женат"},
    "proposition": True, "salary_status": False,
}
FULL_NAME = "Иван Петров"


# ---------------------------------------------------------------------------
# Users and clients of this module, registered in the background


def run_cli(cli, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    """The command line, whatever its exit code."""
    return subprocess.run([cli.binary, *args, "--database", str(cli.database)], cwd=cli.workdir, input=input,
                          capture_output=True, text=True, timeout=180)


def flat(user: dict) -> dict:
    """A user as the admin API writes it (`users show --json`), as the claims it releases:
    the profile's, with the address, its verification, the id and the times beside them."""
    return {**user["profile"], **{k: user[k] for k in ("id", "email", "email_verified", "has_password", "created_at", "updated_at")}}


def show_user(cli, email: str) -> dict:
    return flat(json.loads(cli.run("users", "show", email, "--json")))


def write_profile(cli, name: str, profile: dict):
    path = cli.workdir / f"identity-{name}-{random_token(6)}.json"
    path.write_text(json.dumps(profile, ensure_ascii=False), encoding="utf-8")
    return path


def add_user(cli, email: str, *, name: str | None = None, profile: dict | None = None,
             password: str | None = PASSWORD) -> User:
    args = ["users", "add", email, "--json"]
    if password:
        args.append("--password-stdin")
    if name:
        args += ["--name", name]
    if profile is not None:
        args += ["--profile", str(write_profile(cli, email.split("@")[0], profile))]
    reg = json.loads(cli.run(*args, input=password + "\n" if password else None))
    return User(reg["id"], reg["email"], password or "", reg["profile"].get("name"))


def add_client(cli, callback, name: str, scopes, first_party: bool = False) -> Client:
    reg = cli.add_client(name, redirect_uris=[callback.base + "/cb"], scopes=scopes, first_party=first_party)
    return Client(reg["client_id"], reg.get("client_secret"), reg["redirect_uris"], reg)


@pytest.fixture(scope="module")
def ids(cli, callback):
    """This module's users and clients: ids.get('user:ivan'), ids.get('catalogue')."""
    reg = Registry(cli, workers=2)
    # The two users with passwords first (hashing the password is the slow part).
    reg.submit("user:ivan", lambda: add_user(cli, "ivan.petrov@example.com", name=FULL_NAME, profile=FULL_PROFILE))
    reg.submit("user:bare", lambda: add_user(cli, "bare@example.com"))
    reg.submit("user:olga", lambda: add_user(cli, "olga@example.com", name="Ольга", profile=FULL_PROFILE, password=None))
    specs = {
        "catalogue": ("Catalogue App", list(SCOPE_CLAIMS), False),
        "restricted": ("Restricted App", ["openid", "email", "name"], False),
        "claims": ("Claims App", ["openid", "profile", "email", "name", "birthdate", "maindoc", "inn", "snils"], False),
        "consent": ("Consent Catalogue App", ["openid", "name", "birthdate", "maindoc", "inn"], False),
        "deny": ("Deny Catalogue App", ["openid", "name", "inn"], False),
        "first_sensitive": ("First-party Catalogue App", ["openid", "profile", "name", "inn", "address"], True),
        "account_a": ("Account App A", ["openid", "name", "inn", "offline_access"], False),
        "account_b": ("Account App B", ["openid", "name", "offline_access"], False),
        "browser": ("Browser Catalogue App", ["openid", "name", "birthdate", "maindoc", "inn"], False),
    }
    for key, (name, scopes, first_party) in specs.items():
        reg.submit(key, lambda name=name, scopes=scopes, first_party=first_party:
                   add_client(cli, callback, name, scopes, first_party))
    yield reg
    reg.close()


@pytest.fixture(scope="module")
def ivan(ids) -> User:
    return ids.get("user:ivan")


@pytest.fixture(scope="module")
def bare(ids) -> User:
    return ids.get("user:bare")


@pytest.fixture(scope="module")
def ivan_agent(op, ivan, ids) -> UserAgent:
    """ivan, signed in once for the module."""
    agent = UserAgent(op)
    result = agent.authorize(ids.get("catalogue"), user=ivan, scope="openid")
    assert result.kind == "redirect" and result.code, result.describe()
    return agent


@pytest.fixture(scope="module")
def bare_agent(op, bare, ids) -> UserAgent:
    agent = UserAgent(op)
    result = agent.authorize(ids.get("catalogue"), user=bare, scope="openid")
    assert result.kind == "redirect" and result.code, result.describe()
    return agent


@pytest.fixture(scope="module")
def shown(cli, ivan, bare) -> SimpleNamespace:
    """What `users show --json` says about the two users, read once."""
    return SimpleNamespace(ivan=show_user(cli, ivan.email), bare=show_user(cli, bare.email))


# ---------------------------------------------------------------------------
# Reading the consent and account pages


@dataclass
class Item:
    """One line of a scope list: its description and its tags ("sensitive", "required by the app")."""
    section: str | None
    text: str
    tags: list[str] = field(default_factory=list)


class _ItemParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items: list[Item] = []
        self.section: str | None = None
        self._h3: str | None = None
        self._li: list[str] | None = None
        self._tag: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        if tag == "h3":
            self._h3 = ""
        elif tag == "li":
            self._li = []
            self.items.append(Item(self.section, ""))
        elif tag == "span" and "tag" in classes and self._li is not None:
            self._tag = []

    def handle_endtag(self, tag):
        if tag == "h3" and self._h3 is not None:
            self.section, self._h3 = self._h3.strip(), None
        elif tag == "span" and self._tag is not None:
            self.items[-1].tags.append(" ".join("".join(self._tag).split()))
            self._tag = None
        elif tag == "li" and self._li is not None:
            self.items[-1].text = " ".join("".join(self._li).split())
            self._li = None

    def handle_data(self, data):
        if self._h3 is not None:
            self._h3 += data
        elif self._tag is not None:
            self._tag.append(data)
        elif self._li is not None:
            self._li.append(data)


def scope_items(html_text: str) -> list[Item]:
    parser = _ItemParser()
    parser.feed(html_text)
    return parser.items


def consent_items(result: AuthResult) -> list[Item]:
    assert result.kind == "consent", result.describe()
    return scope_items(result.response.text)


def item_for(items: list[Item], scope: str, lang: str = "en") -> Item:
    found = [item for item in items if describes(item.text, scope, lang)]
    assert len(found) == 1, f"expected one line describing {scope} ({lang}), got {items}"
    return found[0]


def decide(op, agent: UserAgent, result: AuthResult, decision: str) -> AuthResult:
    """Answers a consent page that the agent stopped on."""
    form = result.page.form(action="/consent")
    response = agent.http.post(op.issuer + form.action, data=dict(form.fields, decision=decision),
                               allow_redirects=False, timeout=30)
    return agent.follow(response, result.sent, result.code_verifier, user=None, consent=None, provider=op)


def account_page(op, agent: UserAgent):
    response = agent.http.get(op.issuer + "/account", allow_redirects=False, timeout=30)
    assert response.status_code == 200, f"{response.status_code} {response.text[:300]}"
    return response, parse_page(response.text), scope_items(response.text)


def apps_listed(items: list[Item]) -> set[str]:
    return {item.section for item in items if item.section}


def assert_redirected_error(result: AuthResult, op, error: str):
    assert result.kind == "redirect", result.describe()
    assert result.params.get("error") == error, result.describe()
    assert result.params.get("iss") == op.issuer, result.describe()
    assert result.params.get("state") == result.sent["state"], result.describe()
    assert "code" not in result.params


def expected_userinfo(user_shown: dict, claims) -> dict:
    """sub and the claims the user has; a claim the user lacks is simply not there."""
    return {"sub": user_shown["id"], **{claim: user_shown[claim] for claim in claims if claim in user_shown}}


def released(token_claims: dict) -> dict:
    """The user claims in a token (leaving out iss, aud, sub, nonce, …)."""
    return {name: value for name, value in token_claims.items() if name in USER_CLAIMS}


def code_flow(op, agent: UserAgent, client: Client, scope: str, **extra):
    """The authorization code flow with Authlib as the relying party; the agent walks the pages."""
    session = OAuth2Session(client.client_id, client.client_secret, scope=scope, redirect_uri=client.redirect_uri,
                            code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")
    verifier, nonce = generate_token(48), generate_token(20)
    url, state = session.create_authorization_url(op.endpoint("authorization_endpoint"), code_verifier=verifier,
                                                  nonce=nonce, **extra)
    result = agent.authorize(client, url=url)
    assert result.kind == "redirect" and result.code, result.describe()
    assert result.params["state"] == state
    token = session.fetch_token(op.endpoint("token_endpoint"), authorization_response=result.location,
                                code_verifier=verifier)
    id_claims = op.verify_id_token(token["id_token"], client, nonce=nonce, access_token=token["access_token"])
    info = session.get(op.endpoint("userinfo_endpoint"))
    assert info.status_code == 200, info.text
    assert info.headers["Content-Type"].startswith("application/json")
    return token, id_claims, info.json()


# ---------------------------------------------------------------------------
# The profile as stored, and what discovery says


def test_full_profile_covers_every_claim_of_the_scope_table():
    # A check of this file's test data: every releasable claim has a value, except the server's own.
    assert set(FULL_PROFILE) | {"name"} | set(SERVER_MANAGED) == set(USER_CLAIMS)


def test_users_show_prints_the_profile_given_to_users_add(shown, ivan):
    user = shown.ivan
    assert user["id"] == ivan.id and user["email"] == ivan.email
    assert user["email_verified"] is True and user["has_password"] is True
    assert isinstance(user["updated_at"], int)
    assert user["name"] == FULL_NAME
    assert {claim: user.get(claim) for claim in FULL_PROFILE} == FULL_PROFILE
    assert not set(user) & {c for c in USER_CLAIMS if c not in FULL_PROFILE and c not in SERVER_MANAGED and c != "name"}


def test_users_show_of_a_user_without_profile_has_no_profile_claims(shown):
    assert not set(shown.bare) & (set(FULL_PROFILE) | {"name"}), shown.bare


def test_discovery_lists_every_scope_and_claim_and_the_claims_parameter(op):
    config = op.config
    assert set(SCOPE_CLAIMS) <= set(config["scopes_supported"]), set(SCOPE_CLAIMS) - set(config["scopes_supported"])
    assert {"sub", *USER_CLAIMS} <= set(config["claims_supported"]), \
        {"sub", *USER_CLAIMS} - set(config["claims_supported"])
    assert config["claims_parameter_supported"] is True


# ---------------------------------------------------------------------------
# 1. Each scope releases exactly its claims


def request_scope(scope: str) -> str:
    return "openid" if scope == "openid" else f"openid {scope}"


@pytest.mark.parametrize("scope", list(SCOPE_CLAIMS))
def test_userinfo_releases_exactly_the_claims_of_the_granted_scope(op, ids, ivan_agent, shown, scope):
    client = ids.get("catalogue")
    token, id_claims, info = code_flow(op, ivan_agent, client, request_scope(scope))
    assert set(token["scope"].split()) == set(request_scope(scope).split())
    expected = expected_userinfo(shown.ivan, SCOPE_CLAIMS[scope])
    assert set(expected) == {"sub", *SCOPE_CLAIMS[scope]}, "the full profile should have every claim"
    assert info == expected
    assert id_claims["sub"] == shown.ivan["id"]
    # The ID token: the claims of the standard scopes, never the catalogue's unless asked for.
    if scope in STANDARD_SCOPES:
        assert released(id_claims) == {k: v for k, v in expected.items() if k != "sub"}
    else:
        assert released(id_claims) == {}, f"scope {scope} put catalogue claims into the ID token"
    if scope == "offline_access":
        assert token.get("refresh_token")


@pytest.mark.parametrize("scope", list(SCOPE_CLAIMS))
def test_claims_the_user_lacks_are_absent_not_null(op, ids, bare_agent, shown, scope):
    client = ids.get("catalogue")
    token, id_claims, info = code_flow(op, bare_agent, client, request_scope(scope))
    expected = expected_userinfo(shown.bare, SCOPE_CLAIMS[scope])
    assert info == expected, f"userinfo for a user without these claims: {info}"
    if scope in STANDARD_SCOPES:
        assert released(id_claims) == {k: v for k, v in expected.items() if k != "sub"}
    else:
        assert released(id_claims) == {}


# ---------------------------------------------------------------------------
# 2. Per-client allowed scopes


@pytest.mark.parametrize("scope", ["inn", "maindoc", "profile", "address", "offline_access"])
def test_a_known_scope_the_client_is_not_allowed_is_invalid_scope(op, ids, ivan_agent, scope):
    result = ivan_agent.authorize(ids.get("restricted"), scope=f"openid name {scope}")
    assert_redirected_error(result, op, "invalid_scope")


def test_an_unknown_scope_is_ignored(op, ids, ivan_agent, shown):
    client = ids.get("restricted")
    token, _, info = code_flow(op, ivan_agent, client, "openid name frobnicate")
    assert set(token["scope"].split()) == {"openid", "name"}
    assert info == expected_userinfo(shown.ivan, SCOPE_CLAIMS["name"])


# ---------------------------------------------------------------------------
# 3. The claims parameter (OpenID Connect Core §5.5)


def claims_param(**members) -> str:
    return json.dumps(members)


def test_claims_id_token_member_puts_a_catalogue_claim_into_the_id_token(op, ids, ivan_agent, shown):
    client = ids.get("claims")
    claims = claims_param(id_token={"inn": None, "birthdate": {"essential": True}})
    token, id_claims, info = code_flow(op, ivan_agent, client, "openid", claims=claims)
    # code_flow verified the ID token's signature against the JWKS.
    assert id_claims["inn"] == FULL_PROFILE["inn"]
    assert id_claims["birthdate"] == FULL_PROFILE["birthdate"]
    assert "inn" not in info and "birthdate" not in info, "asked for in the ID token only"


def test_claims_userinfo_member_puts_a_claim_into_userinfo(op, ids, ivan_agent, shown):
    client = ids.get("claims")
    claims = claims_param(userinfo={"snils": None, "identification": {"essential": True}})
    token, id_claims, info = code_flow(op, ivan_agent, client, "openid", claims=claims)
    assert info == {"sub": shown.ivan["id"], "snils": FULL_PROFILE["snils"],
                    "identification": FULL_PROFILE["identification"]}
    assert "snils" not in id_claims and "identification" not in id_claims


def test_claims_both_members_with_scopes(op, ids, ivan_agent, shown):
    # Scope name (catalogue) in userinfo only; given_name asked for in the ID token as well.
    client = ids.get("claims")
    claims = claims_param(id_token={"given_name": {"essential": True}}, userinfo={"inn": None})
    token, id_claims, info = code_flow(op, ivan_agent, client, "openid name", claims=claims)
    assert released(id_claims) == {"given_name": FULL_PROFILE["given_name"]}
    assert info == expected_userinfo(shown.ivan, ("family_name", "given_name", "middle_name", "inn"))


def test_claims_outside_the_clients_allowed_scopes_are_not_released(op, ids, ivan_agent, shown):
    client = ids.get("restricted")  # openid email name
    claims = claims_param(id_token={"inn": {"essential": True}, "given_name": None, "birthdate": None},
                          userinfo={"identification": None, "snils": {"essential": True}, "family_name": None})
    result = ivan_agent.authorize(client, scope="openid", claims=claims, prompt="consent", consent=None)
    texts = [item.text for item in consent_items(result)]
    assert not any(describes(t, s) for t in texts for s in ("inn", "birthdate", "maindoc")), texts
    result = decide(op, ivan_agent, result, "allow")
    assert result.kind == "redirect" and result.code, result.describe()
    token = assert_tokens(op.redeem(client, result))
    id_claims = op.verify_id_token(token["id_token"], client, nonce=result.sent["nonce"])
    assert released(id_claims) == {"given_name": FULL_PROFILE["given_name"]}
    assert op.userinfo(token["access_token"]).json() == {"sub": shown.ivan["id"],
                                                          "family_name": FULL_PROFILE["family_name"]}


@pytest.mark.parametrize("claims", ["{not json", '["inn"]', '{"id_token": "inn"}', '{"userinfo": {"inn": 5}}'],
                         ids=["not-json", "array", "member-not-object", "claim-not-object"])
def test_malformed_claims_parameter_is_invalid_request(op, ids, ivan_agent, claims):
    result = ivan_agent.authorize(ids.get("claims"), scope="openid", claims=claims)
    assert_redirected_error(result, op, "invalid_request")


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_essential_claims_are_marked_on_the_consent_page(op, ids, ivan_agent, lang):
    client = ids.get("claims")
    claims = claims_param(userinfo={"birthdate": {"essential": True}},
                          id_token={"inn": {"essential": True}, "given_name": None})
    result = ivan_agent.authorize(client, scope="openid name birthdate inn", claims=claims, prompt="consent",
                                  ui_locales=lang, consent=None)
    items = consent_items(result)
    essential, sensitive = TAGS[lang]["essential"], TAGS[lang]["sensitive"]
    assert item_for(items, "birthdate", lang).tags == [essential]
    assert sorted(item_for(items, "inn", lang).tags) == sorted([sensitive, essential])
    assert item_for(items, "name", lang).tags == [], "given_name was asked for, but not as essential"
    assert decide(op, ivan_agent, result, "allow").code


def test_claims_sub_value_of_the_signed_in_user_is_satisfied(op, ids, ivan_agent, shown):
    result = ivan_agent.authorize(ids.get("claims"), scope="openid",
                                  claims=claims_param(id_token={"sub": {"value": shown.ivan["id"]}}))
    assert result.kind == "redirect" and result.code and result.seen == [], result.describe()


def test_claims_sub_value_of_someone_else_requires_login(op, ids, ivan_agent, shown):
    client = ids.get("claims")
    claims = claims_param(id_token={"sub": {"value": shown.bare["id"]}})
    silent = ivan_agent.authorize(client, scope="openid", claims=claims, prompt="none")
    assert_redirected_error(silent, op, "login_required")
    interactive = ivan_agent.authorize(client, scope="openid", claims=claims)
    assert interactive.kind == "login", interactive.describe()


# ---------------------------------------------------------------------------
# 4. Consent


def test_consent_is_remembered_and_asked_again_only_for_new_scopes(op, ids, ivan_agent):
    client = ids.get("consent")
    first = ivan_agent.authorize(client, scope="openid name birthdate")
    assert first.kind == "redirect" and first.code and first.seen == ["consent"], first.describe()

    again = ivan_agent.authorize(client, scope="openid name birthdate")
    assert again.kind == "redirect" and again.code and again.seen == [], again.describe()

    wider = ivan_agent.authorize(client, scope="openid name birthdate inn", consent=None)
    items = consent_items(wider)
    assert [item.text for item in items] == [DESCRIPTIONS["en"]["inn"]], "only the new scope is asked for"
    assert item_for(items, "inn").tags == [TAGS["en"]["sensitive"]]
    allowed = decide(op, ivan_agent, wider, "allow")
    assert allowed.kind == "redirect" and allowed.code, allowed.describe()

    assert ivan_agent.authorize(client, scope="openid name birthdate inn").seen == []


def test_prompt_consent_shows_every_requested_scope(op, ids, ivan_agent):
    client = ids.get("consent")
    ivan_agent.authorize(client, scope="openid name birthdate maindoc inn")  # consented (or already)
    result = ivan_agent.authorize(client, scope="openid name birthdate maindoc inn", prompt="consent", consent=None)
    items = consent_items(result)
    assert len(items) == 5, items  # openid too
    for scope in ("name", "birthdate", "maindoc", "inn"):
        tags = item_for(items, scope).tags
        assert tags == ([TAGS["en"]["sensitive"]] if scope in SENSITIVE_SCOPES else []), (scope, tags)
    assert "Consent Catalogue App" in result.page.text
    assert decide(op, ivan_agent, result, "allow").code


@pytest.mark.parametrize("scope", ["inn", "address"])
def test_first_party_client_still_asks_for_a_sensitive_scope(op, ids, ivan_agent, shown, scope):
    client = ids.get("first_sensitive")
    plain = ivan_agent.authorize(client, scope="openid profile name")
    assert plain.kind == "redirect" and plain.code and plain.seen == [], plain.describe()

    asked = ivan_agent.authorize(client, scope=f"openid name {scope}", consent=None)
    items = consent_items(asked)
    tagged = [item for item in items if TAGS["en"]["sensitive"] in item.tags]
    assert len(tagged) == 1, items
    if scope == "inn":
        assert describes(tagged[0].text, "inn")
    assert "First-party Catalogue App" in asked.page.text
    allowed = decide(op, ivan_agent, asked, "allow")
    assert allowed.kind == "redirect" and allowed.code, allowed.describe()
    token = assert_tokens(op.redeem(client, allowed))
    assert op.userinfo(token["access_token"]).json() == expected_userinfo(shown.ivan, SCOPE_CLAIMS["name"] + SCOPE_CLAIMS[scope])

    # Remembered from now on.
    assert ivan_agent.authorize(client, scope=f"openid name {scope}").seen == []


def test_denied_consent_is_access_denied_and_not_remembered(op, ids, ivan_agent):
    client = ids.get("deny")
    result = ivan_agent.authorize(client, scope="openid name inn", consent="deny")
    assert_redirected_error(result, op, "access_denied")
    assert result.seen == ["consent"]
    again = ivan_agent.authorize(client, scope="openid name inn", consent=None)
    assert again.kind == "consent", again.describe()


# ---------------------------------------------------------------------------
# 5. The command line validates profiles


INVALID_UPDATES = [
    ("birthdate", {"birthdate": "1990-02-30"}),
    ("birthdate", {"birthdate": "14.07.1985"}),
    ("birthdate", {"nickname": "changed", "birthdate": "1990-13-01"}),  # the valid part isn't saved either
    ("inn", {"inn": {"number": "770123456789", "series": "77"}}),
    ("inn", {"inn": "770123456789"}),
    ("gender", {"gender": 3}),
    ("gender", {"gender": "male"}),
    ("website", {"website": "javascript:alert(1)"}),
    ("picture", {"picture": "/relative.png"}),
    ("is_self_employed", {"is_self_employed": "yes"}),
    ("identification", {"identification": {"number": "123456", "issued_date": "yesterday"}}),
    ("priority_doc", {"priority_doc": {"type": "passport"}}),
    ("address", {"address": {"locality": "Москва", "city": "Москва"}}),
    ("citizenship", {"citizenship": {"country_code": 643}}),
    ("email", {"email": "other@example.com"}),
    ("email_verified", {"email_verified": False}),
    ("updated_at", {"updated_at": 0}),
    ("sub", {"sub": "someone-else"}),
]


@pytest.mark.parametrize("claim, profile", INVALID_UPDATES,
                         ids=[f"{claim}-{i}" for i, (claim, _) in enumerate(INVALID_UPDATES)])
def test_users_update_with_an_invalid_claim_exits_2_and_changes_nothing(cli, ids, claim, profile):
    olga = ids.get("user:olga")
    before = show_user(cli, olga.email)
    done = run_cli(cli, "users", "update", olga.email, "--profile", str(write_profile(cli, "bad", profile)), "--json")
    assert done.returncode == 2, f"exit {done.returncode}: {done.stderr}{done.stdout}"
    assert re.search(rf"\b{claim}\b", done.stderr), f"the message doesn't name {claim}: {done.stderr!r}"
    assert show_user(cli, olga.email) == before


def test_users_add_with_an_invalid_profile_creates_no_user(cli):
    email = f"invalid-{random_token(4).lower()}@example.com"
    done = run_cli(cli, "users", "add", email, "--profile",
                   str(write_profile(cli, "bad-add", {"given_name": "X", "birthdate": "2001-02-29"})), "--json")
    assert done.returncode == 2, f"exit {done.returncode}: {done.stderr}{done.stdout}"
    assert "birthdate" in done.stderr
    assert run_cli(cli, "users", "show", email, "--json").returncode != 0, "the user was created anyway"


def test_users_update_merges_and_null_removes(cli, ids):
    olga = ids.get("user:olga")
    before = show_user(cli, olga.email)
    change = {"nickname": "Оля", "job_title": None, "inn": {"number": "500100732259"}}
    done = run_cli(cli, "users", "update", olga.email, "--profile", str(write_profile(cli, "merge", change)), "--json")
    assert done.returncode == 0, done.stderr
    after = show_user(cli, olga.email)
    assert flat(json.loads(done.stdout)) == after
    assert after["nickname"] == "Оля" and after["inn"] == {"number": "500100732259"}
    assert "job_title" not in after
    untouched = {k: v for k, v in before.items() if k not in ("nickname", "job_title", "inn", "updated_at")}
    assert {k: after.get(k) for k in untouched} == untouched
    assert after["updated_at"] >= before["updated_at"]


# ---------------------------------------------------------------------------
# 6. The account page


def revoke_form(page, client: Client):
    for form in page.forms:
        if form.action == "/account/consents/revoke" and form.fields.get("client_id") == client.client_id:
            return form
    return None


def test_account_page_lists_allowed_apps_and_removing_access_revokes_refresh_tokens(op, ids, ivan_agent):
    a, b = ids.get("account_a"), ids.get("account_b")
    a1 = ivan_agent.tokens(a, scope="openid name inn offline_access")
    a2 = ivan_agent.tokens(a, scope="openid name offline_access")
    b1 = ivan_agent.tokens(b, scope="openid name offline_access")
    for token in (a1, a2, b1):
        assert token.get("refresh_token"), token

    response, page, items = account_page(op, ivan_agent)
    assert {"Account App A", "Account App B"} <= apps_listed(items)
    app_a = [item for item in items if item.section == "Account App A"]
    assert any(describes(item.text, "name") for item in app_a), app_a
    assert any(describes(item.text, "inn") for item in app_a), app_a
    form = revoke_form(page, a)
    assert form is not None and form.method == "post", page.forms
    assert any(text == "Remove access" for _, _, text in form.buttons), form.buttons

    removed = ivan_agent.http.post(op.issuer + form.action, data=form.fields, allow_redirects=False, timeout=30)
    assert removed.status_code == 303, f"{removed.status_code} {removed.text[:300]}"
    assert removed.headers["Location"].endswith("/account")

    _, page, items = account_page(op, ivan_agent)
    assert "Account App A" not in apps_listed(items)
    assert revoke_form(page, a) is None
    assert "Account App B" in apps_listed(items), "only that app's access is removed"

    for token in (a1, a2):
        assert_oauth_error(op.refresh(a, token["refresh_token"]), "invalid_grant")
    assert_tokens(op.refresh(b, b1["refresh_token"]))
    # And the consent is gone: the app asks again.
    again = ivan_agent.authorize(a, scope="openid name", consent=None)
    assert again.kind == "consent", again.describe()


def test_removing_access_with_a_wrong_csrf_token_is_refused(op, ids, ivan_agent):
    b = ids.get("account_b")
    ivan_agent.sign_in(b, None, scope="openid name")
    _, page, _ = account_page(op, ivan_agent)
    form = revoke_form(page, b)
    forged = ivan_agent.http.post(op.issuer + form.action, data=dict(form.fields, csrf_token="z" * 43),
                                  allow_redirects=False, timeout=30)
    assert forged.status_code == 400, forged.status_code
    assert "Account App B" in apps_listed(account_page(op, ivan_agent)[2])


def test_account_page_without_a_session_signs_in_first(op, ivan):
    agent = UserAgent(op)
    _, page, _ = account_page(op, agent)
    form = page.form(action="/account/login")
    assert form is not None and form.method == "post", page.forms
    assert {"csrf_token", "email", "password"} <= set(form.fields)

    wrong = agent.http.post(op.issuer + form.action, data=dict(form.fields, email=ivan.email, password="wrong one"),
                            allow_redirects=False, timeout=60)
    assert wrong.status_code != 303 and agent.cookie("tessera_session") is None

    ok = agent.http.post(op.issuer + form.action, data=dict(form.fields, email=ivan.email, password=ivan.password),
                         allow_redirects=False, timeout=60)
    assert ok.status_code == 303, f"{ok.status_code} {ok.text[:300]}"
    assert ok.headers["Location"].endswith("/account")
    _, page, _ = account_page(op, agent)
    assert page.form(action="/account/login") is None
    assert ivan.email in page.text


# ---------------------------------------------------------------------------
# 7. In a real browser: the consent page with catalogue scopes, in English and in Russian,
#    and the account page


@pytest.fixture(scope="module")
def driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=900,1000",
                     "--lang=en-US", "--disable-gpu", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    browser = webdriver.Chrome(service=service, options=options)
    browser.set_page_load_timeout(60)
    yield browser
    browser.quit()


BROWSER_SCOPE = "openid name birthdate maindoc inn"


def browser_url(op, client: Client, **extra) -> tuple[str, str, str]:
    state, verifier = random_token(12), random_token(48)
    params = {"response_type": "code", "client_id": client.client_id, "redirect_uri": client.redirect_uri,
              "scope": BROWSER_SCOPE, "state": state, "nonce": random_token(12), "code_challenge": s256(verifier),
              "code_challenge_method": "S256", **extra}
    return query_url(op.endpoint("authorization_endpoint"), params), state, verifier


def wait_for(driver, predicate, what: str, timeout: float = 30):
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        WebDriverWait(driver, timeout).until(predicate)
    except TimeoutException:
        raise AssertionError(f"waited for {what}; the browser is at {driver.current_url} ({driver.title!r}):\n"
                             f"{driver.page_source[:1500]}")


def browser_sign_in(driver, user: User, action: str):
    from selenium.webdriver.common.by import By
    driver.find_element(By.NAME, "email").clear()
    driver.find_element(By.NAME, "email").send_keys(user.email)
    driver.find_element(By.NAME, "password").send_keys(user.password)
    driver.find_element(By.CSS_SELECTOR, f"form[action='{action}'] button[type=submit]").click()


def visible_scope_lines(driver) -> list[tuple[str, list[str]]]:
    """(line text, its tags) for each visible line of the consent page's list."""
    from selenium.webdriver.common.by import By
    lines = []
    for li in driver.find_elements(By.CSS_SELECTOR, "main li"):
        assert li.is_displayed(), li.text
        tags = [span.text for span in li.find_elements(By.CSS_SELECTOR, "span") if span.is_displayed()]
        text = li.text
        for tag in tags:
            text = text.replace(tag, "")
        lines.append((" ".join(text.split()), tags))
    return lines


def check_catalogue_consent(driver, lang: str):
    lines = visible_scope_lines(driver)
    for scope in ("name", "birthdate", "maindoc", "inn"):
        found = [tags for text, tags in lines if describes(text, scope, lang)]
        assert len(found) == 1, f"{scope} ({lang}) not shown once: {lines}"
        expected = [TAGS[lang]["sensitive"]] if scope in SENSITIVE_SCOPES else []
        assert found[0] == expected, f"{scope} ({lang}) tags {found[0]}, expected {expected}"
    assert "Browser Catalogue App" in driver.find_element("tag name", "main").text


def allow_and_land(op, driver, callback, client: Client, state: str, verifier: str):
    from selenium.webdriver.common.by import By
    driver.find_element(By.CSS_SELECTOR, "form[action='/consent'] button[value='allow']").click()
    record = callback.wait_for(lambda r: r.params.get("state") == state, 15)
    assert record is not None, f"no callback; the browser is at {driver.current_url} ({driver.title!r})"
    assert record.path == "/cb" and record.params.get("code") and record.params.get("iss") == op.issuer
    wait_for(driver, lambda d: d.current_url.startswith(client.redirect_uri), "the redirect URI", 10)
    return assert_tokens(op.redeem_code(client, record.params["code"], verifier))


def test_browser_consent_page_describes_catalogue_scopes_in_english(op, driver, callback, artifacts, ids, ivan, shown):
    client = ids.get("browser")
    url, state, verifier = browser_url(op, client, prompt="consent")
    driver.get(url)
    wait_for(driver, lambda d: d.title.startswith("Sign in") or d.title.startswith("Allow access?"), "sign in")
    if driver.title.startswith("Sign in"):
        browser_sign_in(driver, ivan, "/login")
    wait_for(driver, lambda d: d.title.startswith("Allow access?"), "the consent page")
    check_catalogue_consent(driver, "en")
    driver.save_screenshot(str(artifacts / "10-consent-catalogue-en.png"))
    token = allow_and_land(op, driver, callback, client, state, verifier)
    assert op.userinfo(token["access_token"]).json() == expected_userinfo(
        shown.ivan, ("family_name", "given_name", "middle_name", "birthdate", "identification", "inn"))


def test_browser_consent_page_describes_catalogue_scopes_in_russian(op, driver, callback, artifacts, ids, ivan):
    client = ids.get("browser")
    url, state, verifier = browser_url(op, client, ui_locales="ru", prompt="consent")
    driver.get(url)
    wait_for(driver, lambda d: d.title.startswith("Вход") or d.title.startswith("Разрешить доступ?"), "вход")
    if driver.title.startswith("Вход"):
        browser_sign_in(driver, ivan, "/login")
    wait_for(driver, lambda d: d.title.startswith("Разрешить доступ?"), "the Russian consent page")
    check_catalogue_consent(driver, "ru")
    driver.save_screenshot(str(artifacts / "11-consent-catalogue-ru.png"))
    allow_and_land(op, driver, callback, client, state, verifier)


def test_browser_account_page_lists_the_allowed_app(op, driver, artifacts, ids, ivan, ivan_agent):
    ivan_agent.sign_in(ids.get("browser"), None, scope=BROWSER_SCOPE)  # allowed, even when this test runs alone
    driver.get(op.issuer + "/account")
    time.sleep(0.3)
    from selenium.webdriver.common.by import By
    if driver.find_elements(By.CSS_SELECTOR, "form[action='/account/login']"):
        browser_sign_in(driver, ivan, "/account/login")
    wait_for(driver, lambda d: "Browser Catalogue App" in d.find_element(By.TAG_NAME, "main").text,
             "the app on the account page")
    main = driver.find_element(By.TAG_NAME, "main").text
    assert "Remove access" in main and ivan.email in main
    for description in ("Last name, first name, middle name", "Date of birth", "Taxpayer number (INN)"):
        assert description in main
    full_page_screenshot(driver, artifacts / "12-account.png")


def full_page_screenshot(driver, path):
    """The whole page, however long, in one picture (Chrome DevTools Protocol)."""
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 8000), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))
