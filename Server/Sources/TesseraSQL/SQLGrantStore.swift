import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: GrantStore {
    public func insertCode(codeHash: String, _ code: AuthorizationCodeRecord, now: Int64) async throws {
        let claims = try code.claims.map(jsonText)
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO authorization_codes (code_hash, client_id, user_id, redirect_uri, scope, claims, nonce, code_challenge,
                    auth_time, amr, sid, created_at, expires_at)
                VALUES (\(bind: codeHash), \(bind: code.clientID), \(bind: code.userID), \(bind: code.redirectURI),
                    \(bind: code.scope.description), \(bind: claims), \(bind: code.nonce), \(bind: code.codeChallenge), \(bind: code.authTime),
                    \(bind: code.amr.joined(separator: " ")), \(bind: code.sid), \(bind: now), \(bind: code.expiresAt))
                """).run()
        }
    }

    public func code(codeHash: String) async throws -> AuthorizationCodeRecord? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("SELECT * FROM authorization_codes WHERE code_hash = \(bind: codeHash)").first() else { return nil }
            return AuthorizationCodeRecord(
                clientID: try row.string("client_id"), userID: try row.string("user_id"), redirectURI: try row.string("redirect_uri"),
                scope: ScopeSet(parsing: try row.string("scope")), claims: try Self.claims(SQLColumns(row: row)), nonce: try row.optionalString("nonce"),
                codeChallenge: try row.optionalString("code_challenge"), authTime: try row.int("auth_time"),
                amr: try row.string("amr").split(separator: " ").map(String.init), sid: try row.string("sid"),
                expiresAt: try row.int("expires_at"), redeemedAt: try row.optionalInt("redeemed_at"),
                grantID: try row.optionalString("grant_id"))
        }
    }

    public func takeCode(codeHash: String, grantID: String, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE authorization_codes SET redeemed_at = \(bind: now), grant_id = \(bind: grantID)
                WHERE code_hash = \(bind: codeHash) AND redeemed_at IS NULL RETURNING code_hash
                """).first() != nil
        }
    }

    public func insertGrant(_ grant: Grant, refreshToken: RefreshTokenRecord?) async throws {
        try await database.transaction { db in
            try await Self.insertGrant(grant, refreshToken: refreshToken, on: db)
        }
    }

    static func insertGrant(_ grant: Grant, refreshToken: RefreshTokenRecord?, on db: any SQLDatabase) async throws {
        let claims = try grant.claims.map(jsonText)
        // A family token is kept on the grant's row; another has a row of its own.
        let family = refreshToken?.generation != nil ? refreshToken : nil
        try await db.raw("""
            INSERT INTO grants (id, client_id, user_id, scope, claims, auth_time, amr, sid, created_at, expires_at, device_session_id,
                refresh_token_hash, refresh_generation, refresh_expires_at)
            VALUES (\(bind: grant.id), \(bind: grant.clientID), \(bind: grant.userID), \(bind: grant.scope.description), \(bind: claims),
                \(bind: grant.authTime), \(bind: grant.amr.joined(separator: " ")), \(bind: grant.sid),
                \(bind: grant.createdAt), \(bind: grant.expiresAt), \(bind: grant.deviceSessionID),
                \(bind: family?.tokenHash), \(bind: family?.generation ?? 0), \(bind: family?.expiresAt))
            """).run()
        if let refreshToken, family == nil { try await insertRefreshToken(refreshToken, now: grant.createdAt, on: db) }
    }

    static func insertRefreshToken(_ token: RefreshTokenRecord, now: Int64, replacing predecessor: String? = nil,
                                   on db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO refresh_tokens (token_hash, grant_id, client_id, created_at, expires_at, replaces)
            VALUES (\(bind: token.tokenHash), \(bind: token.grantID), \(bind: token.clientID), \(bind: now), \(bind: token.expiresAt),
                \(bind: predecessor))
            """).run()
    }

    public func insertRefreshToken(_ token: RefreshTokenRecord, replacing predecessor: String?, now: Int64) async throws {
        try await database.withDatabase { db in try await Self.insertRefreshToken(token, now: now, replacing: predecessor, on: db) }
    }

    public func takeRefreshToken(tokenHash: String, clientID: String, now: Int64) async throws -> String? {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE refresh_tokens SET used_at = \(bind: now)
                WHERE token_hash = \(bind: tokenHash) AND client_id = \(bind: clientID) AND used_at IS NULL AND expires_at > \(bind: now)
                RETURNING grant_id
                """).first()?.string("grant_id")
        }
    }

    public func settledRefreshToken(tokenHash: String) async throws -> SettledRefreshToken? {
        try await database.withDatabase { db in
            // A no-op write, not a SELECT: it waits for a rotation of this token under way in
            // another transaction to commit, reads what that left, and holds the row until this
            // transaction ends.
            guard let row = try await db.raw("""
                UPDATE refresh_tokens SET used_at = used_at WHERE token_hash = \(bind: tokenHash)
                RETURNING grant_id, client_id, used_at, expires_at
                """).first() else { return nil }
            return SettledRefreshToken(grantID: try row.string("grant_id"), clientID: try row.string("client_id"),
                                       usedAt: try row.optionalInt("used_at"), expiresAt: try row.int("expires_at"))
        }
    }

    public func retireSuccessor(of tokenHash: String, grantID: String, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE refresh_tokens SET used_at = \(bind: now)
                WHERE grant_id = \(bind: grantID) AND replaces = \(bind: tokenHash) AND used_at IS NULL RETURNING token_hash
                """).first() != nil
        }
    }

    public func settledFamily(grantID: String) async throws -> FamilyTokenState? {
        try await database.withDatabase { db in
            // A no-op write, as in settledRefreshToken: it waits for a rotation under way elsewhere.
            guard let row = try await db.raw("""
                UPDATE grants SET refresh_generation = refresh_generation WHERE id = \(bind: grantID)
                RETURNING client_id, refresh_token_hash, refresh_generation, refresh_expires_at, refresh_predecessor, refresh_rotated_at
                """).first() else { return nil }
            return FamilyTokenState(clientID: try row.string("client_id"), tokenHash: try row.optionalString("refresh_token_hash"),
                                    generation: try row.int("refresh_generation"), expiresAt: try row.optionalInt("refresh_expires_at") ?? 0,
                                    predecessor: try row.optionalInt("refresh_predecessor"), rotatedAt: try row.optionalInt("refresh_rotated_at"))
        }
    }

    public func replaceFamilyToken(_ token: RefreshTokenRecord, generation: Int64, predecessor: Int64, rotatedAt: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE grants SET refresh_token_hash = \(bind: token.tokenHash), refresh_generation = \(bind: generation),
                    refresh_expires_at = \(bind: token.expiresAt), refresh_predecessor = \(bind: predecessor), refresh_rotated_at = \(bind: rotatedAt)
                WHERE id = \(bind: token.grantID)
                """).run()
        }
    }

    public func familyTokenGrant(grantID: String, tokenHash: String, now: Int64) async throws -> (grant: Grant, expiresAt: Int64)? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("""
                SELECT * FROM grants WHERE id = \(bind: grantID) AND refresh_token_hash = \(bind: tokenHash)
                    AND refresh_expires_at > \(bind: now) AND revoked_at IS NULL AND expires_at > \(bind: now)
                """).first() else { return nil }
            return (try Self.grant(row), try row.int("refresh_expires_at"))
        }
    }

    public func grant(id: String) async throws -> Grant? {
        try await database.withDatabase { db in try await Self.grant(id: id, on: db) }
    }

    public func liveGrants(sid: String) async throws -> [Grant] {
        try await database.withDatabase { db in
            try await db.raw("SELECT * FROM grants WHERE sid = \(bind: sid) AND revoked_at IS NULL").all().map(Self.grant)
        }
    }

    public func refreshTokenGrant(tokenHash: String, now: Int64) async throws -> (grant: Grant, expiresAt: Int64)? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("""
                SELECT t.expires_at AS token_expires_at, g.* FROM refresh_tokens t JOIN grants g ON g.id = t.grant_id
                WHERE t.token_hash = \(bind: tokenHash) AND t.used_at IS NULL AND t.expires_at > \(bind: now)
                """).first() else { return nil }
            let grant = try Self.grant(row)
            guard grant.revokedAt == nil, grant.expiresAt > now else { return nil }
            return (grant, try row.int("token_expires_at"))
        }
    }

    static func grant(id: String, on db: any SQLDatabase) async throws -> Grant? {
        try await db.raw("SELECT * FROM grants WHERE id = \(bind: id)").first().map(grant)
    }

    /// A grant from a row with the `grants` columns.
    static func grant(_ row: any SQLRow) throws -> Grant {
        try grant(columns: SQLColumns(row: row))
    }

    static func grant(columns row: some StoreColumns) throws -> Grant {
        var grant = Grant(id: try row.string("id"), clientID: try row.string("client_id"), userID: try row.optionalString("user_id"),
                     scope: ScopeSet(parsing: try row.string("scope")), claims: try claims(row), authTime: try row.optionalInt("auth_time"),
                     amr: (try row.optionalString("amr") ?? "").split(separator: " ").map(String.init),
                     sid: try row.optionalString("sid"), createdAt: try row.int("created_at"),
                     expiresAt: try row.int("expires_at"), revokedAt: try row.optionalInt("revoked_at"))
        grant.deviceSessionID = try row.optionalString("device_session_id")
        return grant
    }

    static func claims(_ row: some StoreColumns) throws -> ClaimsRequest? {
        try row.optionalString("claims").map { try JSONDecoder().decode(ClaimsRequest.self, from: Data($0.utf8)) }
    }

    public func revokeGrant(id: String, now: Int64) async throws {
        try await revokeGrants(where: "id = \(bind: id)", now: now)
    }

    public func revokeGrants(userID: String, now: Int64) async throws {
        try await revokeGrants(where: "user_id = \(bind: userID)", now: now)
    }

    public func revokeGrants(userID: String, except grantID: String, now: Int64) async throws {
        try await revokeGrants(where: "user_id = \(bind: userID) AND id <> \(bind: grantID)", now: now)
    }

    public func revokeGrants(userID: String, clientID: String, now: Int64) async throws {
        try await revokeGrants(where: "user_id = \(bind: userID) AND client_id = \(bind: clientID)", now: now)
    }

    public func revokeGrants(deviceSessionID: String, now: Int64) async throws {
        try await revokeGrants(where: "device_session_id = \(bind: deviceSessionID)", now: now)
    }

    /// Revokes the live grants `condition` (on the `grants` columns) selects, and marks their
    /// unused refresh tokens used: any number of families end in two set-based writes.
    private func revokeGrants(where condition: SQLQueryString, now: Int64) async throws {
        try await database.transaction { db in
            try await db.raw("""
                UPDATE refresh_tokens SET used_at = \(bind: now)
                WHERE used_at IS NULL AND grant_id IN (SELECT id FROM grants WHERE \(condition) AND revoked_at IS NULL)
                """).run()
            try await db.raw("UPDATE grants SET revoked_at = \(bind: now) WHERE \(condition) AND revoked_at IS NULL").run()
        }
    }

    public func revokeAccessToken(jti: String, expiresAt: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO revoked_access_tokens (jti, expires_at) VALUES (\(bind: jti), \(bind: expiresAt)) ON CONFLICT (jti) DO NOTHING
                """).run()
        }
    }

    public func isAccessTokenRevoked(jti: String) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("SELECT jti FROM revoked_access_tokens WHERE jti = \(bind: jti)").first() != nil
        }
    }

    public func recordAssertion(clientID: String, jti: String, expiresAt: Int64, now: Int64) async throws -> Bool {
        try await database.transaction { db in
            try await db.raw("DELETE FROM client_assertions WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM used_once WHERE expires_at < \(bind: now)").run()
            let inserted = try await db.raw("""
                INSERT INTO client_assertions (client_id, jti, expires_at) VALUES (\(bind: clientID), \(bind: jti), \(bind: expiresAt))
                ON CONFLICT (client_id, jti) DO NOTHING RETURNING jti
                """).first()
            return inserted != nil
        }
    }
}

extension SQLStore: Housekeeping {
    public func takeTurn(_ task: String, now: Int64, every: Int64) async throws -> Bool {
        let name = "turn:" + task
        return try await database.withDatabase { db in
            try await db.raw("INSERT INTO settings (name, value) VALUES (\(bind: name), '0') ON CONFLICT (name) DO NOTHING").run()
            return try await db.raw("""
                UPDATE settings SET value = \(bind: String(now))
                WHERE name = \(bind: name) AND CAST(value AS BIGINT) <= \(bind: now - every) RETURNING name
                """).first() != nil
        }
    }

    /// Deletes expired codes, interactions, sessions, refresh tokens, revocation entries and
    /// native flows, and the record of codes sent more than a day ago.
    /// `keepFor` seconds of history are kept so that a late replay is still recognised.
    public func purgeExpired(now: Int64, keepFor: Int64) async throws {
        try await purgeExpired(now: now, keepFor: keepFor, batch: Self.purgeBatch)
    }

    /// Rows deleted per transaction from the tables that grow with the users (grants, refresh
    /// tokens, sessions, codes, revoked access tokens), to begin with: a purge of millions of
    /// expired rows is thousands of short transactions, between which the requests go on, not one
    /// that holds SQLite's only connection (or PostgreSQL's locks) for minutes.
    static let purgeBatch = 250
    /// How long one batch may hold the database: the batch shrinks (to 10 rows at least) while
    /// it takes longer and grows back (to ``purgeBatch`` at most) while it takes less than half,
    /// so a request that meets the purge waits about this long, however large and cold the
    /// tables are. (With 1,000 rows a batch, a refresh load on a database of 10 M grants fell
    /// from 1,821 to 146 requests a second while the purge ran, its p99 from 13 to 115 ms; with
    /// 2 ms and a pause of 4 times that, to 1,713, its p99 from 4.2 to 5.9 ms.)
    static let purgeBatchTime = Duration.milliseconds(1)

    /// ``purgeExpired(now:keepFor:)`` with at most `batch` rows per transaction of the large tables.
    package func purgeExpired(now: Int64, keepFor: Int64, batch: Int) async throws {
        let horizon = now - keepFor
        var size = batch
        // After each batch the purge rests: a tenth of the database's time on an idle node, a
        // fortieth on a busy one (``PurgePace``).
        var pace = PurgePace()
        // Refresh tokens before their grants (a grant's deletion cascades to its tokens: deleting
        // them first keeps each of the grants' batches small).
        for (table, key, bound) in [("refresh_tokens", "token_hash", horizon), ("grants", "id", horizon),
                                    ("sessions", "token_hash", horizon), ("authorization_codes", "code_hash", horizon),
                                    ("revoked_access_tokens", "jti", now)] {
            while true {
                let reading = ContinuousClock.now
                if let readAhead = Self.readAhead(table, before: bound, limit: size) { try? await database.readAhead(readAhead) }
                let started = ContinuousClock.now
                guard try await deleteExpired(from: table, key: key, before: bound, limit: size) == size else { break }
                let took = ContinuousClock.now - started
                if took > Self.purgeBatchTime {
                    size = max(size / 2, min(10, batch))
                } else if took < Self.purgeBatchTime / 2 {
                    size = min(size + size / 4 + 1, batch)
                }
                try? await Task.sleep(for: pace.rest(after: took, readAhead: started - reading))
                if Task.isCancelled { return }
            }
        }
        try await database.transaction { db in
            try await db.raw("DELETE FROM interactions WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM pushed_requests WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM handoff_tickets WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM device_sessions WHERE expires_at < \(bind: horizon)").run()
            try await db.raw("DELETE FROM client_assertions WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM native_flows WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM email_changes WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM passkey_challenges WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM email_links WHERE expires_at < \(bind: horizon)").run()
            try await db.raw("DELETE FROM code_sends WHERE sent_at < \(bind: now - 86_400)").run()
            try await db.raw("DELETE FROM upstream_requests WHERE expires_at < \(bind: now)").run()
            try await db.raw("DELETE FROM pending_links WHERE expires_at < \(bind: now)").run()
            // Failures older than a day count in no window; a bucket untouched for an hour is full.
            try await db.raw("DELETE FROM throttle_failures WHERE at < \(bind: now - 86_400)").run()
            try await db.raw("DELETE FROM rate_buckets WHERE updated_at < \(bind: now - 3600)").run()
        }
    }

    /// A statement that reads every page the next batch's delete from `table` will write: its
    /// rows, found through the expiry index as the delete finds them, their entries in each of
    /// the table's indexes, and the tokens that go with a grant. On a database larger than the
    /// caches those pages are mostly on disk, in random places (the rows' keys and sids are
    /// random): read beside the server's connection first (``TransactionalDatabase/readAhead(_:)``),
    /// they are in the cache when the delete holds the connection. On the 10 M-grant database with
    /// the page cache emptied, a refresh load's p99 while the purge ran was 414 ms without it and
    /// 6.8 ms with it, and the purge deleted 9,400 tokens in 28 s against 38,300–40,400
    /// (docs/performance.md, issue 30's fourth session). Nil for the small tables. A read that
    /// fails changes nothing: the delete then reads for itself.
    package static func readAhead(_ table: String, before bound: Int64, limit: Int) -> SQLQueryString? {
        func statement(_ columns: String, _ lookups: [String]) -> SQLQueryString {
            """
            WITH batch AS MATERIALIZED (SELECT rowid AS r, \(unsafeRaw: columns) FROM \(unsafeRaw: table)
                WHERE expires_at < \(bind: bound) LIMIT \(unsafeRaw: String(limit)))
            SELECT \(unsafeRaw: lookups.map { "(SELECT count(*) FROM \($0))" }.joined(separator: " + ")) AS found
            """
        }
        switch table {
        case "refresh_tokens":
            return statement("token_hash, grant_id", [
                "refresh_tokens WHERE token_hash IN (SELECT token_hash FROM batch)",
                "refresh_tokens INDEXED BY refresh_tokens_grant WHERE grant_id IN (SELECT grant_id FROM batch)",
            ])
        case "grants":
            return statement("id, sid, user_id, device_session_id", [
                "grants WHERE id IN (SELECT id FROM batch)",
                "grants INDEXED BY grants_sid WHERE sid IN (SELECT sid FROM batch)",
                "grants INDEXED BY grants_user WHERE user_id IN (SELECT user_id FROM batch)",
                "grants INDEXED BY grants_device_session WHERE device_session_id IN (SELECT device_session_id FROM batch)",
                // Most grants have none: their entries sort by row id among the NULLs.
                """
                grants INDEXED BY grants_device_session WHERE device_session_id IS NULL
                    AND rowid IN (SELECT r FROM batch WHERE device_session_id IS NULL)
                """,
                "refresh_tokens INDEXED BY refresh_tokens_grant WHERE grant_id IN (SELECT id FROM batch)",
            ])
        case "sessions":
            return statement("token_hash, sid, user_id", [
                "sessions WHERE token_hash IN (SELECT token_hash FROM batch)",
                "sessions WHERE sid IN (SELECT sid FROM batch)",
                "sessions INDEXED BY sessions_user WHERE user_id IN (SELECT user_id FROM batch)",
            ])
        default:
            return nil
        }
    }

    /// Deletes up to `limit` rows of `table` whose `expires_at` is before `bound` (found through
    /// the table's expiry index), in a transaction of its own; returns how many it deleted.
    private func deleteExpired(from table: String, key: String, before bound: Int64, limit: Int) async throws -> Int {
        try await database.transaction { db in
            try await db.raw("""
                DELETE FROM \(unsafeRaw: table) WHERE \(unsafeRaw: key) IN
                    (SELECT \(unsafeRaw: key) FROM \(unsafeRaw: table) WHERE expires_at < \(bind: bound) LIMIT \(unsafeRaw: String(limit)))
                RETURNING \(unsafeRaw: key)
                """).all().count
        }
    }
}
