#!/usr/bin/env python3
"""Summarises a demangled `perf script` dump of the server (run.sh --profile).

Usage: perf_summary.py PERF_SCRIPT_TXT [TOP]

Prints three views of the samples:
  * self time by category (the leaf frame: where the CPU actually was);
  * time by owning activity: for each sample, the innermost frame that belongs to a known
    activity (RSA signing, JSON, SQLite, ...), so the allocations and ARC traffic made *by*
    JSON encoding count as JSON encoding; samples with no such frame are "unattributed";
  * the top self symbols.
Percentages are of all samples of the server process (every thread).
"""

import collections
import re
import sys

# (category, regex on "symbol (dso)") for the leaf frame; first match wins.
SELF_CATEGORIES = [
    ("RSA signing (OpenSSL libcrypto)", r"libcrypto\.so"),
    ("RSA/bignum (BoringSSL)", r"CCryptoBoringSSL_.*(bn_|BN_|rsa|RSA|mont|_mul|_sqr|gather|scatter)|mulx4x|sqrx8x|bn_post|rsaz_"),
    ("SHA-256 (BoringSSL)", r"(?i)sha256|sha_block"),
    ("other BoringSSL", r"CCryptoBoringSSL|boringssl"),
    ("SQLite engine", r"\bsqlite3|VaporCSQLite|CSQLite"),
    ("JSON (Foundation)", r"JSON"),
    ("malloc/free", r"\b(malloc|free|cfree|_int_malloc|_int_free|calloc|realloc|malloc_consolidate|tcache|unlink_chunk|_int_realloc|posix_memalign|aligned_alloc|swift_slowAlloc|swift_slowDealloc)\b"),
    ("swift alloc/dealloc object", r"swift_allocObject|swift_deallocObject|swift_deallocClassInstance|swift_allocBox|_swift_release_dealloc"),
    ("ARC retain/release", r"swift_retain|swift_release|swift_bridgeObjectRetain|swift_bridgeObjectRelease|swift_unknownObject|swift_beginAccess|swift_endAccess"),
    ("Swift concurrency runtime", r"swift_task|swift_job|swift::|swift_continuation|libswift_Concurrency|TaskLocal|swift_asyncLet"),
    ("scrypt (must not appear)", r"(?i)scrypt"),
    ("HTTP (NIO/Hummingbird)", r"NIO|Hummingbird|HTTPTypes|llhttp|HTTP"),
    ("Foundation other", r"libFoundation|\bFoundation(Essentials|Internationalization)?\."),
    # By library where the runtime is a shared one; by its functions' names where it is linked
    # into the binary (scripts/build-release).
    ("Swift stdlib", r"libswiftCore|Swift\.|\bString\b|Dictionary|Array|\b_?_?swift_|\bHasher\b|_StringGuts|tryCast|\bgetCache\b"),
    ("pthread/futex/libc other", r"libc\.so|libc-|pthread|__lll|futex|memcpy|memmove|memset|strlen"),
    ("kernel", r"kernel\.kallsyms|\[k\]"),
]

# (activity, regex) searched from the leaf outwards; the innermost match owns the sample.
ACTIVITIES = [
    ("scrypt (must not appear)", r"(?i)scrypt|PasswordHasher"),
    ("RSA signing (OpenSSL libcrypto)", r"libcrypto\.so|OpenSSLRSASigner"),
    ("RSA signing (BoringSSL bignum)", r"_RSA\.Signing|CCryptoBoringSSL_(RSA|rsa|BN_|bn_)|CCryptoBoringSSL_.*mont|mulx4x|sqrx8x|bn_post|rsaz_|JWSSigningKey\.signature"),
    ("SHA-256 / token hashing", r"(?i)sha256|tokenHash|ClientSecretHash"),
    ("Base64URL encode/decode", r"Base64URL|base64Encoded|Data\(base64Encoded"),
    ("JSON encode/decode", r"JSONEncoder|JSONDecoder|JSONWriter|JSONValue|CanonicalJSON|JSONMap|JSONScanner|__JSON|JSONSerialization"),
    ("SQLite (engine + driver + SQLKit)", r"\bsqlite3|SQLiteNIO|SQLiteKit|SQLKit|SQLiteConnection|SQLiteHandle|SQLiteValuesRow|SQLRow|SQLStore|AsyncLock|SQLiteDatabase|DatabaseThread"),
    ("random tokens (SecureRandom)", r"SecureRandom|RAND_bytes|getrandom"),
    ("form body / Basic header parsing", r"RequestParameters|basicCredentials|formParameters|collectBody"),
    ("HTTP server (NIO/Hummingbird)", r"NIO|Hummingbird|HTTPTypes|llhttp|HTTPField"),
    ("Swift concurrency runtime", r"swift_task|swift_job|swift::runJob|swift_continuation|libswift_Concurrency|swift::|_dispatch"),
    ("kernel (syscalls, loopback TCP, scheduling)", r"kernel\.kallsyms"),
]

LEAF_ONLY = {"Swift concurrency runtime", "kernel (syscalls, loopback TCP, scheduling)"}
RUNTIME_FRAME = re.compile(r"kernel\.kallsyms|libc\.so|libswiftCore\.so|libswift_Concurrency\.so|libdispatch\.so|ld-linux|\[unknown\]"
                           r"|\bswift_job_run|\bswift::|\b_dispatch_|\bdispatch_")

HEADER = re.compile(r"^\S.*?\s+\d+(/\d+)?\s+(\[\d+\]\s+)?[\d.]+:\s")


def frames_of(block):
    frames = []
    for line in block[1:]:
        text = line.strip()
        if not text:
            continue
        # "addr symbol+0xoff (dso)"
        parts = text.split(None, 1)
        frames.append(parts[1] if len(parts) > 1 else parts[0])
    return frames


def read_samples(path):
    block = []
    with open(path, errors="replace") as handle:
        for line in handle:
            if line.strip() == "":
                if block:
                    yield block
                block = []
            else:
                block.append(line.rstrip("\n"))
    if block:
        yield block


def classify(frame, table):
    for name, pattern in table:
        if re.search(pattern, frame):
            return name
    return None


def short(frame, width=110):
    frame = re.sub(r"\+0x[0-9a-f]+", "", frame)
    return frame if len(frame) <= width else frame[: width - 1] + "…"


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    compiled_self = [(n, re.compile(p)) for n, p in SELF_CATEGORIES]
    compiled_act = [(n, re.compile(p)) for n, p in ACTIVITIES]
    total = 0
    self_cat = collections.Counter()
    owner = collections.Counter()
    symbols = collections.Counter()
    threads = collections.Counter()
    for block in read_samples(sys.argv[1]):
        if not HEADER.match(block[0]):
            continue
        frames = frames_of(block)
        if not frames:
            continue
        total += 1
        threads[block[0].split()[0]] += 1
        leaf = frames[0]
        symbols[short(leaf)] += 1
        self_cat[next((n for n, p in compiled_self if p.search(leaf)), "other")] += 1
        found = "unattributed (other Tessera/Swift/Foundation code)"
        only_runtime_so_far = True
        for frame in frames:
            name = next((n for n, p in compiled_act if p.search(frame)), None)
            # The runtime and the kernel own a sample only when they are where the CPU was
            # (no application frame below them): every stack has swift_job_run at its root.
            if name and (name not in LEAF_ONLY or only_runtime_so_far):
                found = name
                break
            if not RUNTIME_FRAME.search(frame):
                only_runtime_so_far = False
        owner[found] += 1
    if total == 0:
        raise SystemExit("perf_summary.py: no samples")

    def table(title, counter, limit=None):
        print(f"\n{title}")
        for name, count in counter.most_common(limit):
            print(f"  {100.0 * count / total:5.1f}%  {name}")

    print(f"{total} samples of the server process")
    table("threads (comm):", threads, 8)
    table("self time by category (leaf frame):", self_cat)
    table("time by owning activity (innermost known frame on the stack):", owner)
    table(f"top {top} self symbols:", symbols, top)


if __name__ == "__main__":
    main()
