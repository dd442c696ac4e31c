#!/usr/bin/env python3
"""Makes a running Tessera server purge expired rows now, and times the purge from outside.

    python3 purge_now.py --database FILE.sqlite [--timeout SECONDS]
    python3 purge_now.py --postgres postgres://USER:PASSWORD@HOST:PORT/DB [--timeout SECONDS]

The server purges once an hour across its nodes: the maintenance round (every 5 s) of the
first node that finds the `turn:purge` setting an hour old takes the turn (writes the time into
it) and runs `SQLStore.purgeExpired` in one transaction. This script
1. puts a sentinel in `revoked_access_tokens`, a jti nobody holds with `expires_at` 0, which
   that transaction deletes with the rest;
2. sets `turn:purge` to 0, so the next maintenance round (within 5 s) takes the turn;
3. waits until the turn is taken (the value is no longer 0), then until the sentinel is gone
   (the purge's transaction committed), polling every --poll seconds.
Prints one line, times in ms from this script's start:

    PURGE taken_ms=2480 committed_ms=9730 purge_ms=7250 server_turn=1795802721

purge_ms is from the turn seen taken to the commit seen (+- one poll). Exit status 1 when the
purge did not commit within --timeout seconds (see the server's log: "maintenance failed").
Standard library only (PostgreSQL through psql).
"""

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import time


class SQLite:
    def __init__(self, path):
        if not os.path.exists(path):
            raise SystemExit(f"purge_now: no database at {path}")
        self.db = sqlite3.connect(path, isolation_level=None, timeout=60)

    def execute(self, sql):
        self.db.execute(sql)

    def scalar(self, sql):
        row = self.db.execute(sql).fetchone()
        return None if row is None else str(row[0])


class Postgres:
    def __init__(self, url):
        self.psql = shutil.which("psql") or sys.exit("purge_now: --postgres needs psql")
        self.url = url

    def execute(self, sql):
        self.scalar(sql)

    def scalar(self, sql):
        result = subprocess.run([self.psql, self.url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"purge_now: psql failed: {result.stderr.strip()}")
        out = result.stdout.strip()
        return out or None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--database", metavar="FILE")
    where.add_argument("--postgres", metavar="URL")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the commit (default 300)")
    parser.add_argument("--poll", type=float, default=0.05, help="seconds between looks (default 0.05)")
    args = parser.parse_args()
    db = SQLite(args.database) if args.database else Postgres(args.postgres)

    start = time.monotonic()
    jti = f"purge-sentinel-{os.getpid()}-{int(time.time() * 1000)}"
    db.execute(f"INSERT INTO revoked_access_tokens (jti, expires_at) VALUES ('{jti}', 0)")
    db.execute("INSERT INTO settings (name, value) VALUES ('turn:purge', '0') ON CONFLICT (name) DO UPDATE SET value = '0'")
    deadline = start + args.timeout
    taken = committed = None
    turn = "0"
    while time.monotonic() < deadline:
        if taken is None:
            turn = db.scalar("SELECT value FROM settings WHERE name = 'turn:purge'")
            if turn != "0":
                taken = time.monotonic()
        if taken is not None and db.scalar(f"SELECT COUNT(*) FROM revoked_access_tokens WHERE jti = '{jti}'") == "0":
            committed = time.monotonic()
            break
        time.sleep(args.poll)
    ms = lambda t: "-" if t is None else f"{1000 * (t - start):.0f}"
    purge = "-" if committed is None else f"{1000 * (committed - taken):.0f}"
    print(f"PURGE taken_ms={ms(taken)} committed_ms={ms(committed)} purge_ms={purge} server_turn={turn}", flush=True)
    if committed is None:
        print("purge_now: " + ("no node took the purge's turn" if taken is None else "the purge did not commit")
              + f" within {args.timeout:.0f} s (is a server running on this database? see its log)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
