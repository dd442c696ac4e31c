#!/usr/bin/env python3
"""Fills an existing Tessera database with a large population, for the benchmark's large-database runs.

    python3 generate_database.py --database FILE.sqlite [options]
    python3 generate_database.py --postgres postgres://USER:PASSWORD@HOST:PORT/DB [options]

The database must exist and be migrated: `tessera serve`, `tessera users add` or `tessera clients add`
with `--database` create and migrate it. Stop the server first (a fill takes the write lock for a
chunk at a time, and a server reading a half-filled database measures nothing useful).

What it adds (issue 30: "1 M users and 10 M grants"; docs/performance.md, "The large database"):

- four clients of its own, registered as `tessera clients add` would: `gen-web` (confidential,
  first-party), `gen-ios` and `gen-android` (public, first-party) and `gen-partner` (confidential,
  third-party, so its users have consents); the two confidential ones have the secret
  GENERATED_CLIENT_SECRET below; `--existing-client ID` adds a client already in the database;
- --users users `user1@example.com` ... `userN@example.com`: UUID ids, verified addresses, a small
  profile, all with one scrypt hash (PHC string at the server's default parameters, ln=15 r=8 p=3)
  of --password, so any of them can sign in;
- --grants grants, each with one live (unused) refresh token: a family token on the grant's row
  (the SHA-256 hex of a token nobody knows, a generation from 1 to 200, the last rotation's
  time), or with --stored-refresh-tokens a row of its own in refresh_tokens, as releases before
  family tokens kept them, under the key the server gives those (RefreshTokenKey: the second it
  was made in 8 hex digits, then the SHA-256 hex of a token nobody knows: 64 random hex digits;
  no token value is kept), spread over the clients (weights
  3:3:2:1) and over the users (skewed: at 10 grants a user the busiest hold ~14 x that, 1 in 11 none), with
  realistic times: a live grant was made in the last 30 days and expires 30 days after (the
  default refresh-token lifetime); an --expired-share of them expired between 1 and 60 days
  before the purge's horizon (now - 1 day), so the hourly purge deletes them and their tokens;
- --sessions browser sessions (default: a tenth of the users; the same expired share; 7-day
  lifetime) and one consent per (user, third-party client) that has a grant;
- for a --federated-share of the users (default a quarter), a linked Apple ID (`upstream_identities`,
  without an upstream refresh token): the server reads that table at every start.

The turn of the hourly purge (`settings`, `turn:purge`) is set to now, so a server started on
the database does not purge in its first hour (the purge is then triggered on purpose, by
benchmarks/purge_now.py); --purge-due leaves it due at once instead.

Rows are made by the database itself, a chunk (--chunk rows) per transaction: SQLite from a
recursive CTE with synchronous=OFF (WAL, as the server keeps it) and foreign-key checks off
(every reference is valid by construction); PostgreSQL from generate_series through psql.
Which user, client and time each row gets comes from integer hashes of the row number and
--seed, so two runs with one seed make the same population; ids, hashes and sids are random.
Standard library only.
"""

import argparse
import base64
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time

DAY = 86_400
REFRESH_TOKEN_LIFETIME = 30 * DAY  # Configuration.refreshTokenLifetime: a grant's and its tokens' lifetime
SESSION_LIFETIME = 7 * DAY  # Configuration.sessionLifetime
PURGE_KEEP = DAY  # Provider.purgeExpiredIfDue: purgeExpired(keepFor: 86_400)
P = 2_147_483_647  # a prime below 2^31: products of two residues stay below 2^62 (no SQLite REAL, no bigint overflow)
GENERATED_CLIENT_SECRET = "generated-client-secret-0123456789-abcdefghij"
USER_AGENT = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"

# (id, name, public, first_party, redirect URI, weight among the grants)
CLIENTS = [
    ("gen-web", "Generated web app", False, True, "https://web.example/callback", 3),
    ("gen-ios", "Generated iOS app", True, True, "com.example.generated:/callback", 3),
    ("gen-android", "Generated Android app", True, True, "com.example.generated.android:/callback", 2),
    ("gen-partner", "Generated partner", False, False, "https://partner.example/callback", 1),
]
CLIENT_SCOPE = "openid profile email offline_access"


def phc_b64(data):
    return base64.b64encode(data).decode().rstrip("=")


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def scrypt_phc(password):
    """A PHC string as Tessera's PasswordHasher writes it: `$scrypt$ln=15,r=8,p=3$<salt>$<hash>`."""
    salt = os.urandom(16)
    derived = hashlib.scrypt(password.encode(), salt=salt, n=1 << 15, r=8, p=3, maxmem=64 << 20, dklen=32)
    return f"$scrypt$ln=15,r=8,p=3${phc_b64(salt)}${phc_b64(derived)}"


def client_secret_hash(secret):
    """ClientSecretHash.make: `sha256$<salt>$<base64url(SHA-256(salt + "$" + secret))>`."""
    salt = b64url(os.urandom(16))
    return f"sha256${salt}${b64url(hashlib.sha256((salt + '$' + secret).encode()).digest())}"


class Streams:
    """Seeded integer hashes of a row number, as SQL: stream k of `x` is a value in [0, P)."""

    def __init__(self, seed):
        rng = random.Random(seed)
        self.params = [tuple(rng.randrange(1 << 16, P - 1) for _ in range(4)) for _ in range(32)]

    def bijective(self, k, x):
        """A one-to-one map of x in [0, P): for the part of an id that must be unique."""
        a, s, _, _ = self.params[k]
        return f"(({x} * {a} + {s}) % {P})"

    def h(self, k, x):
        """A scrambled value: square the bijection, then multiply."""
        a, s, c, m = self.params[k]
        x0 = f"(({x} * {a} + {s}) % {P})"
        return f"(((({x0} * {x0} + {c}) % {P}) * {m}) % {P})"

    def below(self, k, x, bound):
        return f"({self.h(k, x)} % {bound})"

    def share(self, k, x, fraction):
        """True for about `fraction` of the rows."""
        return f"({self.h(k, x)} < {int(round(fraction * P))})"

    def skewed(self, k, x, count):
        """1..count, skewed to the low end (the product of two uniform variables): heavy users."""
        return f"(1 + ({self.h(k, x)} * {self.h(k + 1, x)} / {P}) * {count} / {P})"


class SQLiteTarget:
    name = "SQLite"
    true, false = "1", "0"

    def __init__(self, path, cache_mib):
        if not os.path.exists(path):
            raise SystemExit(f"generate_database: no database at {path}: create it first (tessera users add ... --database {path})")
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, timeout=60)
        for pragma in ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = OFF", "PRAGMA foreign_keys = OFF",
                       "PRAGMA temp_store = MEMORY", f"PRAGMA cache_size = -{cache_mib * 1024}"):
            self.db.execute(pragma)

    def series(self, lo, hi):
        """(prefix, source) for a statement over the row numbers lo..hi as `n`."""
        return f"WITH RECURSIVE s(n) AS (SELECT {lo} UNION ALL SELECT n + 1 FROM s WHERE n < {hi}) ", "s"

    def random_hex(self, nbytes):
        return f"lower(hex(randomblob({nbytes})))"

    def hex(self, x, width):
        return f"printf('%0{width}x', {x})"

    def least(self, a, b):
        return f"min({a}, {b})"

    def temp_table(self, name, select):
        return [f"DROP TABLE IF EXISTS temp.{name}", f"CREATE TEMP TABLE {name} AS {select}"]

    def run(self, statements):
        self.db.execute("BEGIN")
        try:
            for statement in statements:
                self.db.execute(statement)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def scalar(self, sql):
        row = self.db.execute(sql).fetchone()
        return row[0] if row else None

    def finish(self):
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size(self):
        total = 0
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.path + suffix):
                total += os.path.getsize(self.path + suffix)
        return total


class PostgresTarget:
    name = "PostgreSQL"
    true, false = "TRUE", "FALSE"

    def __init__(self, url):
        self.psql = shutil.which("psql")
        if self.psql is None:
            raise SystemExit("generate_database: --postgres needs psql (Debian: postgresql-client)")
        self.url = url

    def series(self, lo, hi):
        return "", f"generate_series({lo}::bigint, {hi}::bigint) AS s(n)"

    def random_hex(self, nbytes):
        # gen_random_uuid() is built in since PostgreSQL 13: 32 hex digits (122 random bits) per UUID.
        uuids = " || ".join(["replace(gen_random_uuid()::text, '-', '')"] * ((nbytes * 2 + 31) // 32))
        return f"substr({uuids}, 1, {nbytes * 2})"

    def hex(self, x, width):
        return f"lpad(to_hex({x}), {width}, '0')"

    def least(self, a, b):
        return f"least({a}, {b})"

    def temp_table(self, name, select):
        return [f"CREATE TEMP TABLE {name} ON COMMIT DROP AS {select}"]

    def _psql(self, sql, single_transaction):
        command = [self.psql, self.url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"]
        if single_transaction:
            command.append("--single-transaction")
        result = subprocess.run(command, input=sql, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"generate_database: psql failed: {result.stderr.strip()}")
        return result.stdout

    def run(self, statements):
        self._psql("".join(statement + ";\n" for statement in statements), True)

    def scalar(self, sql):
        out = self._psql(sql + ";\n", False).strip()
        if out == "":
            return None
        try:
            return int(out)
        except ValueError:
            return out

    def finish(self):
        # What autovacuum would do soon after a load this size: the planner's statistics.
        self._psql("ANALYZE;\n", False)

    def size(self):
        return self.scalar("SELECT pg_database_size(current_database())")


def quote(text):
    return "'" + text.replace("'", "''") + "'"


class Generator:
    def __init__(self, target, args):
        self.t = target
        self.args = args
        self.r = Streams(args.seed)
        self.now = int(time.time())

    def say(self, text):
        print(text, flush=True)

    def check(self):
        version = self.t.scalar("SELECT MAX(version) FROM schema_migrations")
        if version is None or int(version) < 23:
            raise SystemExit("generate_database: the database is not migrated (run tessera serve or tessera users add "
                             "with --database once)")
        if self.t.scalar("SELECT COUNT(*) FROM users WHERE email = 'user1@example.com'"):
            raise SystemExit("generate_database: user1@example.com exists: this database was generated already")
        for client in self.args.existing_client:
            if not self.t.scalar(f"SELECT COUNT(*) FROM clients WHERE id = {quote(client)}"):
                raise SystemExit(f"generate_database: no client {client} in the database (--existing-client)")

    def chunks(self, total):
        lo = 1
        while lo <= total:
            hi = min(total, lo + self.args.chunk - 1)
            yield lo, hi
            lo = hi + 1

    def fill(self, label, total, statements_for):
        """Runs statements_for(lo, hi) a chunk at a time, one transaction each, with progress."""
        start = time.monotonic()
        last_report = start
        for lo, hi in self.chunks(total):
            self.t.run(statements_for(lo, hi))
            now = time.monotonic()
            if hi == total or now - last_report >= 10:
                last_report = now
                self.say(f"  {label}: {hi:,} / {total:,}  {now - start:.1f} s  ({hi / max(now - start, 1e-9):,.0f} rows/s)")
        elapsed = time.monotonic() - start
        self.say(f"{label}: {total:,} in {elapsed:.1f} s")
        return elapsed

    def clients(self):
        t = self.t
        statements = []
        slots = []
        for client_id, name, public, first_party, redirect, weight in CLIENTS:
            secret_hash = "NULL" if public else quote(client_secret_hash(GENERATED_CLIENT_SECRET))
            method = "none" if public else "client_secret_basic"
            statements.append(f"""
                INSERT INTO clients (id, name, secret_hash, auth_method, redirect_uris, post_logout_redirect_uris, grant_types,
                    scopes, first_party, subject_type, created_at)
                VALUES ({quote(client_id)}, {quote(name)}, {secret_hash}, {quote(method)}, {quote(json.dumps([redirect]))}, '[]',
                    '["authorization_code","refresh_token"]', {quote(CLIENT_SCOPE)}, {t.true if first_party else t.false},
                    'public', {self.now - 400 * DAY})
                ON CONFLICT (id) DO NOTHING""")
            slots += [(client_id, CLIENT_SCOPE, first_party)] * weight
        for client_id in self.args.existing_client:
            scope = t.scalar(f"SELECT scopes FROM clients WHERE id = {quote(client_id)}")
            first_party = str(t.scalar(f"SELECT first_party FROM clients WHERE id = {quote(client_id)}")).lower() in ("1", "t", "true")
            slots.append((client_id, scope, first_party))
        t.run(statements)
        self.slots = slots
        self.say(f"clients: {', '.join(c[0] for c in CLIENTS)} (secret of gen-web and gen-partner: {GENERATED_CLIENT_SECRET})"
                 + (f"; existing: {', '.join(self.args.existing_client)}" if self.args.existing_client else ""))

    def case(self, index_sql, values):
        """SQL choosing values[index] for an index column."""
        return "CASE " + index_sql + " " + " ".join(f"WHEN {i} THEN {v}" for i, v in enumerate(values)) + " END"

    def since(self, k, created, lifetime):
        """A time between `created` and now, or `created + lifetime` when that is earlier (a last use, a rotation)."""
        end = self.t.least(str(self.now), f"{created} + {lifetime}")
        return f"({created} + {self.r.below(k, 'n', lifetime)} % ({end} - {created} + 1))"

    def user_id(self, u):
        """A version-4-shaped UUID for user number u: unique (its first group is a bijection of u) and repeatable."""
        r, t = self.r, self.t
        return (f"{t.hex(r.bijective(0, u), 8)} || '-' || {t.hex(f'{r.h(1, u)} % 65536', 4)} || '-4' || "
                f"{t.hex(f'{r.h(2, u)} % 4096', 3)} || '-' || {t.hex(f'32768 + {r.h(3, u)} % 16384', 4)} || '-' || "
                f"{t.hex(r.h(4, u), 8)} || {t.hex(f'{r.h(5, u)} % 65536', 4)}")

    def users(self):
        t, r, n = self.t, self.r, self.args.users
        password_hash = quote(self.password_hash)

        def statements(lo, hi):
            prefix, source = t.series(lo, hi)
            created = f"({self.now} - 60 - {r.below(6, 'n', 730 * DAY)})"
            profile = ("'{\"family_name\":\"Number ' || n || '\",\"given_name\":\"User\",\"locale\":\"en\","
                       "\"name\":\"User ' || n || '\"}'")
            statements = [f"""
                INSERT INTO users (id, email, email_verified, password_hash, profile, created_at, updated_at, version, roles)
                {prefix}SELECT {self.user_id('n')}, 'user' || n || '@example.com', {t.true}, {password_hash}, {profile},
                    {created}, {created}, 1, '' FROM {source}"""]
            if self.args.federated_share > 0:
                # Also signed in with Apple: the identity row a federated sign-in links (no upstream
                # refresh token kept). The server reads this table at every start (sealStoredTokens).
                statements.append(f"""
                    INSERT INTO upstream_identities (provider_id, subject, user_id, email, proven, refresh_token, client_id,
                        created_at, last_used_at)
                    {prefix}SELECT 'apple', '001' || {t.random_hex(3)} || '.' || {t.random_hex(16)} || '.' || {t.random_hex(2)},
                        {self.user_id('n')}, 'user' || n || '@example.com', {t.true}, NULL, NULL, {created},
                        {self.since(18, created, 730 * DAY)} FROM {source}
                    WHERE {r.share(19, 'n', self.args.federated_share)}""")
            return statements
        return self.fill("users", n, statements)

    def sessions(self):
        t, r, users, share = self.t, self.r, self.args.users, self.args.expired_share

        def statements(lo, hi):
            prefix, source = t.series(lo, hi)
            # Live: signed in in the last 7 days. Expired: past the purge's horizon by 1 minute to 30 days.
            created = (f"CASE WHEN {r.share(7, 'n', share)} "
                       f"THEN {self.now - SESSION_LIFETIME - PURGE_KEEP - 60} - {r.below(8, 'n', 30 * DAY)} "
                       f"ELSE {self.now - 60} - {r.below(8, 'n', SESSION_LIFETIME - 3600)} END")
            return t.temp_table("gen_sessions", f"""
                {prefix}SELECT {r.skewed(9, 'n', users)} AS u, {created} AS created_at, n FROM {source}""") + [f"""
                INSERT INTO sessions (token_hash, sid, user_id, auth_time, amr, created_at, expires_at, user_agent, address, last_seen_at)
                SELECT {t.random_hex(32)}, {t.random_hex(11)}, {self.user_id('u')}, created_at, 'pwd', created_at,
                    created_at + {SESSION_LIFETIME}, {quote(USER_AGENT)}, '198.51.100.' || (n % 250 + 1),
                    {self.since(11, 'created_at', SESSION_LIFETIME)} FROM gen_sessions"""]
        return self.fill("sessions", self.args.sessions, statements)

    def grants(self):
        t, r, users, share = self.t, self.r, self.args.users, self.args.expired_share
        slot = r.below(12, "n", len(self.slots))
        client = self.case("slot", [quote(s[0]) for s in self.slots])
        scope = self.case("slot", [quote(s[1]) for s in self.slots])
        third_party = [i for i, s in enumerate(self.slots) if not s[2]]

        def statements(lo, hi):
            prefix, source = t.series(lo, hi)
            # Live: made in the last 30 days (expires at least an hour from now). Expired: its expiry
            # 1 minute to 60 days before the purge's horizon (now - 1 day).
            created = (f"CASE WHEN {r.share(13, 'n', share)} "
                       f"THEN {self.now - REFRESH_TOKEN_LIFETIME - PURGE_KEEP - 60} - {r.below(14, 'n', 60 * DAY)} "
                       f"ELSE {self.now - 60} - {r.below(14, 'n', REFRESH_TOKEN_LIFETIME - 3600)} END")
            staged = t.temp_table("gen_grants", f"""
                {prefix}SELECT {t.random_hex(11)} AS id, {slot} AS slot, {r.skewed(15, 'n', users)} AS u,
                    {created} AS created_at, {t.random_hex(11)} AS sid, n FROM {source}""")
            # The live token is the grant's latest rotation: made between the grant and now (or its end).
            token_created = self.since(17, "created_at", REFRESH_TOKEN_LIFETIME)
            if self.args.stored_refresh_tokens:
                statements = staged + [f"""
                    INSERT INTO grants (id, client_id, user_id, scope, claims, auth_time, amr, sid, created_at, expires_at)
                    SELECT id, {client}, {self.user_id('u')}, {scope}, NULL, created_at, 'pwd', sid, created_at,
                        created_at + {REFRESH_TOKEN_LIFETIME} FROM gen_grants""", f"""
                    INSERT INTO refresh_tokens (token_hash, grant_id, client_id, created_at, expires_at)
                    SELECT {t.hex(token_created, 8)} || {t.random_hex(32)}, id, {client}, {token_created},
                        created_at + {REFRESH_TOKEN_LIFETIME} FROM gen_grants"""]
            else:
                # A family token on the grant's row, as the server keeps it: the hash of a token
                # nobody knows, rotated some number of times, the last at token_created.
                generation = f"(1 + {r.below(18, 'n', 200)})"
                statements = staged + [f"""
                    INSERT INTO grants (id, client_id, user_id, scope, claims, auth_time, amr, sid, created_at, expires_at,
                        refresh_token_hash, refresh_generation, refresh_expires_at, refresh_predecessor, refresh_rotated_at)
                    SELECT id, {client}, {self.user_id('u')}, {scope}, NULL, created_at, 'pwd', sid, created_at,
                        created_at + {REFRESH_TOKEN_LIFETIME}, {t.random_hex(32)}, {generation}, created_at + {REFRESH_TOKEN_LIFETIME},
                        {generation} - 1, {token_created} FROM gen_grants"""]
            if third_party:
                # One consent per user and third-party client, from its first grant; a later chunk's
                # grant of the same pair finds it there.
                statements.append(f"""
                    INSERT INTO consents (user_id, client_id, scope, granted_at)
                    SELECT {self.user_id('u')}, {client}, MIN({scope}), MIN(created_at) FROM gen_grants
                    WHERE slot IN ({', '.join(map(str, third_party))}) GROUP BY u, slot
                    ON CONFLICT (user_id, client_id) DO NOTHING""")
            return statements
        return self.fill("grants + refresh tokens", self.args.grants, statements)

    def purge_turn(self):
        value = "0" if self.args.purge_due else str(self.now)
        self.t.run([f"""
            INSERT INTO settings (name, value) VALUES ('turn:purge', '{value}')
            ON CONFLICT (name) DO UPDATE SET value = '{value}'"""])
        self.say("purge: due at once (--purge-due)" if self.args.purge_due
                 else "purge: its turn taken now, so a server started on this database purges in an hour, or when "
                      "benchmarks/purge_now.py asks")

    def report(self):
        horizon = self.now - PURGE_KEEP
        self.say("rows:")
        for table, expiring in [("users", None), ("clients", None), ("grants", "expires_at"), ("refresh_tokens", "expires_at"),
                                ("sessions", "expires_at"), ("consents", None), ("upstream_identities", None), ("authorization_codes", "expires_at"),
                                ("audit_events", None)]:
            count = self.t.scalar(f"SELECT COUNT(*) FROM {table}")
            line = f"  {table:<20} {int(count):>12,}"
            if expiring:
                purgeable = self.t.scalar(f"SELECT COUNT(*) FROM {table} WHERE {expiring} < {horizon}")
                line += f"   of which past the purge's horizon: {int(purgeable):,}"
            self.say(line)

    def run(self):
        args = self.args
        self.check()
        started = time.monotonic()
        self.say(f"{self.t.name}: {args.users:,} users, {args.grants:,} grants (+ one refresh token each), {args.sessions:,} sessions; "
                 f"expired share {args.expired_share:.0%}; seed {args.seed}; chunks of {args.chunk:,}")
        self.password_hash = scrypt_phc(args.password)
        self.clients()
        timings = {"users": self.users()}
        if args.sessions:
            timings["sessions"] = self.sessions()
        if args.grants:
            timings["grants"] = self.grants()
        self.purge_turn()
        finishing = time.monotonic()
        self.t.finish()
        self.say(f"finish ({'checkpoint' if isinstance(self.t, SQLiteTarget) else 'ANALYZE'}): {time.monotonic() - finishing:.1f} s")
        total = time.monotonic() - started
        self.report()
        size = self.t.size()
        self.say(f"database size: {size / 1e6:,.1f} MB")
        per_million = {k: v / (n / 1e6) for k, v, n in [("users", timings["users"], args.users),
                       ("sessions", timings.get("sessions", 0), args.sessions), ("grants", timings.get("grants", 0), args.grants)] if n}
        self.say("GENERATE " + " ".join(f"{k}_s_per_million={v:.1f}" for k, v in per_million.items())
                 + f" total_s={total:.1f} bytes={size}")
        self.say(f"generated users sign in with the password {args.password!r} (e.g. user1@example.com)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="See the module docstring (head -40 generate_database.py) for what is made.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--database", metavar="FILE", help="a Tessera SQLite database, already migrated")
    where.add_argument("--postgres", metavar="URL", help="a Tessera PostgreSQL database (postgres://...), already migrated; needs psql")
    parser.add_argument("--users", type=int, default=1_000_000, help="users to add (default 1,000,000)")
    parser.add_argument("--grants", type=int, default=10_000_000, help="grants to add, one refresh token each (default 10,000,000)")
    parser.add_argument("--stored-refresh-tokens", action="store_true",
                        help="each grant's token in a row of its own (refresh_tokens), as releases before family tokens kept "
                             "them, rather than on the grant's row")
    parser.add_argument("--sessions", type=int, help="browser sessions to add (default: users / 10)")
    parser.add_argument("--expired-share", type=float, default=0.2,
                        help="share of grants, tokens and sessions already past the purge's horizon (default 0.2)")
    parser.add_argument("--federated-share", type=float, default=0.25,
                        help="share of the users also linked to an Apple ID, an upstream_identities row each (default 0.25)")
    parser.add_argument("--seed", type=int, default=1, help="seed of who gets which grant when (default 1)")
    parser.add_argument("--password", default="generated-Passw0rd", help="every generated user's password (default generated-Passw0rd)")
    parser.add_argument("--existing-client", action="append", default=[], metavar="ID",
                        help="also give grants to this client already in the database (repeatable)")
    parser.add_argument("--purge-due", action="store_true", help="leave the hourly purge due: a server started on it purges within 5 s")
    parser.add_argument("--chunk", type=int, default=100_000, help="rows per transaction (default 100,000)")
    parser.add_argument("--cache-mib", type=int, default=1024, help="SQLite page cache during the fill, MiB (default 1024)")
    args = parser.parse_args()
    if args.sessions is None:
        args.sessions = args.users // 10
    if args.users < 1 or args.grants < 0 or args.sessions < 0 or not 0 <= args.expired_share <= 1 \
            or not 0 <= args.federated_share <= 1 or args.chunk < 1:
        parser.error("--users must be at least 1; --grants, --sessions, --chunk not negative; the shares in 0..1")
    if args.users >= P or args.grants >= P or args.sessions >= P:
        parser.error(f"at most {P - 1:,} rows of a kind")
    target = SQLiteTarget(args.database, args.cache_mib) if args.database else PostgresTarget(args.postgres)
    Generator(target, args).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
