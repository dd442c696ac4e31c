import SQLKit
import TesseraDomain

extension SQLStore: ThrottleStore {
    public func reserveFailures(_ keys: [(key: String, limit: Int)], since: Int64, now: Int64, attempt: String) async throws -> Bool {
        struct AtLimit: Error {}
        // In one order, so two attempts sharing keys never wait for each other crosswise.
        let keys = keys.sorted { $0.key < $1.key }
        do {
            try await database.transaction { db in
                // SQLite's BEGIN IMMEDIATE serialises writers already; PostgreSQL's READ
                // COMMITTED would let two transactions count the same rows, so each key is locked.
                if db.dialect.name == "postgresql" {
                    for (key, _) in keys { try await db.raw("SELECT pg_advisory_xact_lock(hashtextextended(\(bind: key), 0))").run() }
                }
                for (key, limit) in keys {
                    let counted = try await db.raw("""
                        INSERT INTO throttle_failures (key_hash, at, attempt) SELECT \(bind: key), \(bind: now), \(bind: attempt)
                        WHERE (SELECT COUNT(*) FROM throttle_failures WHERE key_hash = \(bind: key) AND at >= \(bind: since)) < \(bind: limit)
                        RETURNING key_hash
                        """).first()
                    if counted == nil { throw AtLimit() }
                }
            }
            return true
        } catch is AtLimit {
            return false
        }
    }

    public func forgetFailures(attempt: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM throttle_failures WHERE attempt = \(bind: attempt)").run()
        }
    }

    public func clearFailures(_ key: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM throttle_failures WHERE key_hash = \(bind: key)").run()
        }
    }

    public func takeToken(_ key: String, limit: Int, window: Int64, now: Int64) async throws -> Int64? {
        let rate = Double(limit) / Double(max(1, window)), full = Double(limit)
        return try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO rate_buckets (key_hash, tokens, updated_at) VALUES (\(bind: key), \(bind: full), \(bind: now))
                ON CONFLICT (key_hash) DO NOTHING
                """).run()
            // The bucket refilled for the time since its last use (never backwards: another
            // node's clock may be ahead), capped at full, less the token taken: one
            // conditional write, so concurrent takes on any nodes never share a token.
            let refilled: SQLQueryString = """
                (CASE WHEN tokens + (CASE WHEN \(bind: now) > updated_at THEN \(bind: now) - updated_at ELSE 0 END) * \(bind: rate) >= \(bind: full)
                    THEN \(bind: full)
                    ELSE tokens + (CASE WHEN \(bind: now) > updated_at THEN \(bind: now) - updated_at ELSE 0 END) * \(bind: rate) END)
                """
            let taken = try await db.raw("""
                UPDATE rate_buckets SET tokens = \(refilled) - 1,
                    updated_at = CASE WHEN \(bind: now) > updated_at THEN \(bind: now) ELSE updated_at END
                WHERE key_hash = \(bind: key) AND \(refilled) >= 1
                RETURNING tokens
                """).first()
            guard taken == nil else { return nil }
            guard let row = try await db.raw("SELECT tokens, updated_at FROM rate_buckets WHERE key_hash = \(bind: key)").first() else {
                return nil
            }
            let tokens = min(full, try row.decode(column: "tokens", as: Double.self)
                                 + Double(max(0, now - (try row.int("updated_at")))) * rate)
            return max(1, Int64(((1 - tokens) / rate).rounded(.up)))
        }
    }
}
