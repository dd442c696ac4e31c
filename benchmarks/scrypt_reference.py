"""The reference of the password sign-in load: one password hash's time on one core.

    python3 scrypt_reference.py DATABASE EMAIL [RUNS]

Reads the user's stored hash from the SQLite DATABASE (read-only) -- a PHC string
`$scrypt$ln=15,r=8,p=3$<salt>$<hash>` written by `tessera users add`, so at the server's
configured parameters, which are what every sign-in of that user verifies at -- and runs the
same derivation (those N, r, p, a 16-byte salt, 32 bytes out, as Tessera's PasswordHasher)
RUNS times (default 5) with OpenSSL's scrypt through Python's hashlib, in this one thread.
Prints one line:

    SCRYPT ln=15 r=8 p=3 runs=5 cpu_ms=170.2 wall_ms=171.0 cpu_all_ms=170.2,169.8,...

cpu_ms and wall_ms are the medians of the runs' CPU time (this process's; what `openssl speed`
divides by too) and wall time. Standard library only.
"""

import hashlib
import os
import re
import sqlite3
import statistics
import sys
import time


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    database, email = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) == 4 else 5
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    row = connection.execute("SELECT password_hash FROM users WHERE email = ?", (email,)).fetchone()
    connection.close()
    if row is None or row[0] is None:
        print(f"scrypt_reference: no password hash for {email} in {database}", file=sys.stderr)
        return 1
    match = re.match(r"\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$", row[0])
    if match is None:
        print(f"scrypt_reference: the stored hash is not Tessera's scrypt: {row[0][:20]}...", file=sys.stderr)
        return 1
    log_n, r, p = (int(group) for group in match.groups())
    n = 1 << log_n
    # OpenSSL refuses more than maxmem (32 MiB by default); scrypt needs 128 * N * r bytes and a little more.
    maxmem = 128 * n * r * 2 + (1 << 20)
    password = b"bench-Passw0rd-7q"
    cpu, wall = [], []
    for _ in range(runs):
        salt = os.urandom(16)
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=maxmem, dklen=32)
        cpu.append(1000 * (time.process_time() - cpu_start))
        wall.append(1000 * (time.perf_counter() - wall_start))
    print(f"SCRYPT ln={log_n} r={r} p={p} runs={runs} cpu_ms={statistics.median(cpu):.1f} "
          f"wall_ms={statistics.median(wall):.1f} cpu_all_ms={','.join(f'{t:.1f}' for t in cpu)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
