import SQLKit
import TesseraDomain

extension SQLStore: ThrottleStore {
    public func failureCounts(_ keys: [String], since: Int64) async throws -> [String: Int] {
        guard !keys.isEmpty else { return [:] }
        return try await database.withDatabase { db in
            let rows = try await db.raw("""
                SELECT key_hash, COUNT(*) AS failures FROM throttle_failures
                WHERE key_hash IN (\(binds: keys)) AND at >= \(bind: since) GROUP BY key_hash
                """).all()
            var counts: [String: Int] = [:]
            for row in rows { counts[try row.string("key_hash")] = Int(try row.int("failures")) }
            return counts
        }
    }

    public func recordFailures(_ keys: [String], now: Int64) async throws {
        try await database.transaction { db in
            for key in keys {
                try await db.raw("INSERT INTO throttle_failures (key_hash, at) VALUES (\(bind: key), \(bind: now))").run()
            }
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
