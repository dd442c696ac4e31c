import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: SessionStore, InteractionStore, ConsentStore {
    public func insertSession(tokenHash: String, _ session: BrowserSession, now: Int64) async throws {
        let amr = session.amr.joined(separator: " ")
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO sessions (token_hash, sid, user_id, auth_time, amr, created_at, expires_at, last_seen_at, user_agent, address)
                VALUES (\(bind: tokenHash), \(bind: session.sid), \(bind: session.userID), \(bind: session.authTime),
                    \(bind: amr), \(bind: now), \(bind: session.expiresAt), \(bind: now), \(bind: session.device.userAgent),
                    \(bind: session.device.address))
                """).run()
        }
    }

    public func session(tokenHash: String, now: Int64) async throws -> BrowserSession? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("""
                SELECT * FROM sessions WHERE token_hash = \(bind: tokenHash) AND revoked_at IS NULL AND expires_at > \(bind: now)
                """).first() else { return nil }
            return try Self.session(row)
        }
    }

    public func sessions(userID: String, now: Int64) async throws -> [BrowserSession] {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT * FROM sessions WHERE user_id = \(bind: userID) AND revoked_at IS NULL AND expires_at > \(bind: now)
                ORDER BY auth_time DESC
                """).all().map(Self.session)
        }
    }

    static func session(_ row: any SQLRow) throws -> BrowserSession {
        var session = BrowserSession(sid: try row.string("sid"), userID: try row.string("user_id"), authTime: try row.int("auth_time"),
                                     amr: try row.string("amr").split(separator: " ").map(String.init), expiresAt: try row.int("expires_at"))
        session.createdAt = try row.int("created_at")
        session.lastSeenAt = try row.optionalInt("last_seen_at") ?? session.createdAt
        session.device = SessionDevice(userAgent: try row.optionalString("user_agent"), address: try row.optionalString("address"))
        return session
    }

    public func touchSession(tokenHash: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE sessions SET last_seen_at = \(bind: now) WHERE token_hash = \(bind: tokenHash)").run()
        }
    }

    public func endSession(sid: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE sessions SET revoked_at = \(bind: now) WHERE sid = \(bind: sid) AND revoked_at IS NULL").run()
        }
    }

    public func revokeSession(tokenHash: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE sessions SET revoked_at = \(bind: now) WHERE token_hash = \(bind: tokenHash) AND revoked_at IS NULL").run()
        }
    }

    public func endSessions(userID: String, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("UPDATE sessions SET revoked_at = \(bind: now) WHERE user_id = \(bind: userID) AND revoked_at IS NULL").run()
        }
    }

    public func insertInteraction(idHash: String, request: String, now: Int64, expiresAt: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO interactions (id_hash, request, created_at, expires_at)
                VALUES (\(bind: idHash), \(bind: request), \(bind: now), \(bind: expiresAt))
                """).run()
        }
    }

    public func interaction(idHash: String, now: Int64) async throws -> String? {
        try await database.withDatabase { db in
            try await db.raw("SELECT request FROM interactions WHERE id_hash = \(bind: idHash) AND expires_at > \(bind: now)")
                .first()?.string("request")
        }
    }

    public func deleteInteraction(idHash: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM interactions WHERE id_hash = \(bind: idHash)").run()
        }
    }

    public func consentedScopes(userID: String, clientID: String) async throws -> ScopeSet {
        try await database.withDatabase { db in
            let row = try await db.raw("SELECT scope FROM consents WHERE user_id = \(bind: userID) AND client_id = \(bind: clientID)").first()
            return ScopeSet(parsing: try row?.string("scope"))
        }
    }

    public func consents(userID: String) async throws -> [Consent] {
        try await database.withDatabase { db in
            try await db.raw("SELECT client_id, scope, granted_at FROM consents WHERE user_id = \(bind: userID) ORDER BY granted_at DESC, client_id")
                .all().map { row in
                    Consent(clientID: try row.string("client_id"), scopes: ScopeSet(parsing: try row.string("scope")),
                            grantedAt: try row.int("granted_at"))
                }
        }
    }

    public func deleteConsent(userID: String, clientID: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM consents WHERE user_id = \(bind: userID) AND client_id = \(bind: clientID)").run()
        }
    }

    public func recordConsent(userID: String, clientID: String, scopes: ScopeSet, now: Int64) async throws {
        try await database.transaction { db in
            // The row exists first, then is held while its scopes are merged: two consents to
            // one client at once (two tabs) both end up in it, on one node or two.
            try await db.raw("""
                INSERT INTO consents (user_id, client_id, scope, granted_at) VALUES (\(bind: userID), \(bind: clientID), '', \(bind: now))
                ON CONFLICT (user_id, client_id) DO NOTHING
                """).run()
            let existing = ScopeSet(parsing: try await db.raw("""
                UPDATE consents SET scope = scope WHERE user_id = \(bind: userID) AND client_id = \(bind: clientID) RETURNING scope
                """).first()?.string("scope"))
            let merged = ScopeSet(existing.values + scopes.values).description
            try await db.raw("""
                UPDATE consents SET scope = \(bind: merged), granted_at = \(bind: now)
                WHERE user_id = \(bind: userID) AND client_id = \(bind: clientID)
                """).run()
        }
    }
}
