import Foundation
import SQLKit
import TesseraCore

/// An account's identity at an upstream provider.
public struct UpstreamIdentity: Sendable, Equatable, Codable {
    public var providerID: String
    public var subject: String
    public var userID: String
    public var email: String?
    /// The link to the account is proven: the upstream verified the address, or the owner of
    /// the account signed in to link it. Unproven links go when the address is proven otherwise.
    public var proven: Bool
    /// The upstream's refresh token (sealed with the master key when there is one): Apple
    /// requires revoking it when the account is deleted.
    public var refreshToken: String?
    /// The client id the refresh token was issued to (Apple: the services id or an app's bundle id).
    public var clientID: String?
    public var createdAt: Int64
    public var lastUsedAt: Int64
}

/// A request on its way to an upstream provider, found by the hash of its `state`.
public struct UpstreamRequest: Sendable, Equatable {
    public var providerID: String
    public var nonce: String
    public var codeVerifier: String?
    /// The authorization request to resume, when it started on the hosted login page.
    public var interaction: String?
    /// Set when a signed-in user connects the provider from the account page.
    public var linkUserID: String?
    /// Hash of the cookie of the browser that started the request.
    public var browserHash: String
    public var expiresAt: Int64
}

/// An identity waiting for the owner of the account with its address to sign in.
public struct PendingLink: Sendable, Equatable {
    public var userID: String
    public var identity: UpstreamIdentity
    /// The authorization request to resume once linked.
    public var interaction: String?
    public var expiresAt: Int64
}

public enum IdentityLinkOutcome: Sendable, Equatable {
    case linked
    /// The identity belongs to another account already.
    case inUseByAnotherAccount
}

public protocol IdentityStore: Sendable {
    func identity(providerID: String, subject: String) async throws -> UpstreamIdentity?
    func identities(userID: String) async throws -> [UpstreamIdentity]
    /// Links an identity (or refreshes a linked one's email and tokens).
    func link(_ identity: UpstreamIdentity) async throws -> IdentityLinkOutcome
    /// Atomically creates the account and links the identity to it; throws
    /// ``StoreError/duplicate(_:)`` when the address got an account meanwhile.
    func createUser(_ user: User, identity: UpstreamIdentity) async throws
    func removeIdentity(providerID: String, subject: String) async throws
    /// Identities whose upstream refresh token is stored in clear (written before tokens were sealed).
    func identitiesWithClearRefreshTokens() async throws -> [UpstreamIdentity]
    /// Replaces an identity's stored refresh token (`old`, as read) with `new`; false when it changed meanwhile.
    func replaceRefreshToken(providerID: String, subject: String, old: String, new: String) async throws -> Bool
    func insertUpstreamRequest(stateHash: String, _ request: UpstreamRequest, now: Int64) async throws
    /// Takes (and deletes) the request of a state, if `browserHash` is the browser's that
    /// started it: a state works once, and only there.
    func takeUpstreamRequest(stateHash: String, browserHash: String, now: Int64) async throws -> UpstreamRequest?
    func insertPendingLink(tokenHash: String, _ link: PendingLink, now: Int64) async throws
    func pendingLink(tokenHash: String, now: Int64) async throws -> PendingLink?
    func deletePendingLink(tokenHash: String) async throws
    /// Deletes the account row (and, by cascade, what hangs on it); see ``AccountRules/deleteAccount(_:now:in:)``.
    func deleteUser(id: String) async throws
    /// Removes the identities linked on the strength of an address the upstream had not verified.
    func removeUnprovenIdentities(userID: String) async throws
}

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
        try await database.transaction { db in
            if let existing = try await db.raw("""
                SELECT user_id FROM upstream_identities WHERE provider_id = \(bind: identity.providerID) AND subject = \(bind: identity.subject)
                """).first() {
                guard try existing.string("user_id") == identity.userID else { return .inUseByAnotherAccount }
                try await db.raw("""
                    UPDATE upstream_identities SET email = \(bind: identity.email),
                        refresh_token = COALESCE(\(bind: identity.refreshToken), refresh_token), client_id = COALESCE(\(bind: identity.clientID), client_id),
                        proven = proven OR \(bind: identity.proven), last_used_at = \(bind: identity.lastUsedAt)
                    WHERE provider_id = \(bind: identity.providerID) AND subject = \(bind: identity.subject)
                    """).run()
                return .linked
            }
            try await Self.insertIdentity(identity, on: db)
            return .linked
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
