import Foundation
import SQLKit
import TesseraCore
import TesseraDomain

extension SQLStore: IdentityStore {
    public func identity(providerID: String, subject: String) async throws -> UpstreamIdentity? {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT * FROM upstream_identities WHERE provider_id = \(bind: providerID) AND subject = \(bind: subject)
                """).first().map(Self.identity)
        }
    }

    public func identities(userID: String) async throws -> [UpstreamIdentity] {
        try await database.withDatabase { db in
            try await db.raw("SELECT * FROM upstream_identities WHERE user_id = \(bind: userID) ORDER BY created_at, provider_id")
                .all().map(Self.identity)
        }
    }

    public func link(_ identity: UpstreamIdentity) async throws -> IdentityLinkOutcome {
        try await database.withDatabase { db in
            // One conditional write: a new identity is linked, a known one of this account is
            // refreshed, and one of another account is left alone (no row comes back).
            try await db.raw("""
                INSERT INTO upstream_identities (provider_id, subject, user_id, email, proven, refresh_token, client_id, created_at, last_used_at)
                VALUES (\(bind: identity.providerID), \(bind: identity.subject), \(bind: identity.userID), \(bind: identity.email),
                    \(bind: identity.proven), \(bind: identity.refreshToken), \(bind: identity.clientID), \(bind: identity.createdAt),
                    \(bind: identity.lastUsedAt))
                ON CONFLICT (provider_id, subject) DO UPDATE SET email = excluded.email,
                    refresh_token = COALESCE(excluded.refresh_token, upstream_identities.refresh_token),
                    client_id = COALESCE(excluded.client_id, upstream_identities.client_id),
                    proven = upstream_identities.proven OR excluded.proven, last_used_at = excluded.last_used_at
                WHERE upstream_identities.user_id = excluded.user_id
                RETURNING user_id
                """).first() == nil ? .inUseByAnotherAccount : .linked
        }
    }

    public func createUser(_ user: User, identity: UpstreamIdentity) async throws {
        let profile = try jsonText(user.profile)
        do {
            try await database.transaction { db in
                try await db.raw("""
                    INSERT INTO users (id, email, email_verified, password_hash, profile, created_at, updated_at)
                    VALUES (\(bind: user.id), \(bind: user.email), \(bind: user.emailVerified), \(bind: user.passwordHash), \(bind: profile),
                        \(bind: user.createdAt), \(bind: user.updatedAt))
                    """).run()
                try await Self.insertIdentity(identity, on: db)
            }
        } catch where isUniqueViolation(error) {
            throw StoreError.duplicate("a user with this email, or this identity")
        }
    }

    static func insertIdentity(_ identity: UpstreamIdentity, on db: any SQLDatabase) async throws {
        try await db.raw("""
            INSERT INTO upstream_identities (provider_id, subject, user_id, email, proven, refresh_token, client_id, created_at, last_used_at)
            VALUES (\(bind: identity.providerID), \(bind: identity.subject), \(bind: identity.userID), \(bind: identity.email),
                \(bind: identity.proven), \(bind: identity.refreshToken), \(bind: identity.clientID), \(bind: identity.createdAt),
                \(bind: identity.lastUsedAt))
            """).run()
    }

    public func removeIdentity(providerID: String, subject: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM upstream_identities WHERE provider_id = \(bind: providerID) AND subject = \(bind: subject)").run()
        }
    }

    public func insertUpstreamRequest(stateHash: String, _ request: UpstreamRequest, now: Int64) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO upstream_requests (state_hash, provider_id, nonce, code_verifier, interaction, link_user_id, browser_hash,
                    created_at, expires_at)
                VALUES (\(bind: stateHash), \(bind: request.providerID), \(bind: request.nonce), \(bind: request.codeVerifier),
                    \(bind: request.interaction), \(bind: request.linkUserID), \(bind: request.browserHash), \(bind: now),
                    \(bind: request.expiresAt))
                """).run()
        }
    }

    public func takeUpstreamRequest(stateHash: String, browserHash: String, now: Int64) async throws -> UpstreamRequest? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("""
                DELETE FROM upstream_requests WHERE state_hash = \(bind: stateHash) AND browser_hash = \(bind: browserHash) RETURNING *
                """).first() else { return nil }
            let request = UpstreamRequest(
                providerID: try row.string("provider_id"), nonce: try row.string("nonce"), codeVerifier: try row.optionalString("code_verifier"),
                interaction: try row.optionalString("interaction"), linkUserID: try row.optionalString("link_user_id"),
                browserHash: try row.string("browser_hash"), expiresAt: try row.int("expires_at"))
            return request.expiresAt > now ? request : nil
        }
    }

    public func insertPendingLink(tokenHash: String, _ link: PendingLink, now: Int64) async throws {
        let identity = try jsonText(link.identity)
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO pending_links (token_hash, user_id, identity, interaction, created_at, expires_at)
                VALUES (\(bind: tokenHash), \(bind: link.userID), \(bind: identity), \(bind: link.interaction), \(bind: now), \(bind: link.expiresAt))
                """).run()
        }
    }

    public func pendingLink(tokenHash: String, now: Int64) async throws -> PendingLink? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("""
                SELECT * FROM pending_links WHERE token_hash = \(bind: tokenHash) AND expires_at > \(bind: now)
                """).first() else { return nil }
            return PendingLink(userID: try row.string("user_id"), identity: try row.json("identity", as: UpstreamIdentity.self),
                               interaction: try row.optionalString("interaction"), expiresAt: try row.int("expires_at"))
        }
    }

    public func deletePendingLink(tokenHash: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM pending_links WHERE token_hash = \(bind: tokenHash)").run()
        }
    }

    public func deleteUser(id: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM users WHERE id = \(bind: id)").run()
        }
    }

    public func identitiesWithClearRefreshTokens() async throws -> [UpstreamIdentity] {
        try await database.withDatabase { db in
            try await db.raw("""
                SELECT * FROM upstream_identities WHERE refresh_token IS NOT NULL AND substr(refresh_token, 1, 7) <> 'enc:v1:'
                """).all().map(Self.identity)
        }
    }

    public func replaceRefreshToken(providerID: String, subject: String, old: String, new: String) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE upstream_identities SET refresh_token = \(bind: new)
                WHERE provider_id = \(bind: providerID) AND subject = \(bind: subject) AND refresh_token = \(bind: old) RETURNING subject
                """).first() != nil
        }
    }

    public func removeUnprovenIdentities(userID: String) async throws {
        try await database.withDatabase { db in
            try await db.raw("DELETE FROM upstream_identities WHERE user_id = \(bind: userID) AND proven = \(bind: false)").run()
        }
    }

    static func identity(_ row: any SQLRow) throws -> UpstreamIdentity {
        UpstreamIdentity(providerID: try row.string("provider_id"), subject: try row.string("subject"), userID: try row.string("user_id"),
                         email: try row.optionalString("email"), proven: try row.bool("proven"),
                         refreshToken: try row.optionalString("refresh_token"), clientID: try row.optionalString("client_id"),
                         createdAt: try row.int("created_at"), lastUsedAt: try row.int("last_used_at"))
    }
}
