import Foundation
import SQLKit
import TesseraCore

/// An email sign-in link, until it is used or expires; found by the hash of its code.
public struct EmailLinkRecord: Sendable, Equatable {
    public var clientID: String
    public var email: String
    public var continueURL: String?
    /// The app completes the sign-in (the browser sends it to `continueURL`).
    public var handleInApp: Bool
    /// The hosted-login authorization request the link resumes.
    public var interaction: String?
    /// Hash of the same-device cookie of the browser that asked for the link.
    public var deviceHash: String?
    public var language: String
    public var wrongAttempts: Int
    public var createdAt: Int64
    public var expiresAt: Int64
    public var usedAt: Int64?
}

/// What using a link did.
public enum EmailLinkRedemption: Sendable, Equatable {
    /// Signed in; `isNewUser` when the link created the account. An account whose address was
    /// unverified lost its password and every session and grant (`securedAccount`).
    case signedIn(User, isNewUser: Bool, securedAccount: Bool)
    /// The address is now the signed-in user's, verified.
    case linked(User)
    case reauthenticated(User)
    /// Used meanwhile, or expired.
    case unusable
    /// Linking: the address belongs to another account; the link stays unused.
    case credentialInUse
    /// Re-authentication: the link is for another user's address; the link stays unused.
    case userMismatch
}

/// What a link is used for.
public enum EmailLinkOperation: Sendable, Equatable {
    /// `newUser` is the account to create if the address has none.
    case signIn(newUser: User)
    /// Adds the address to this signed-in user's account.
    case link(userID: String)
    /// Proves again that this signed-in user controls their address.
    case reauthenticate(userID: String)
}

public protocol EmailLinkStore: Sendable {
    func insertEmailLink(codeHash: String, _ link: EmailLinkRecord) async throws
    func emailLink(codeHash: String) async throws -> EmailLinkRecord?
    /// Takes one of the link's `limit` completions with an address before it is compared
    /// (parallel guesses each use one up); nil when none is left.
    func reserveEmailAttempt(codeHash: String, limit: Int) async throws -> Int?
    /// Atomically marks the link used (if it still can be) and does `operation`.
    func redeemEmailLink(codeHash: String, operation: EmailLinkOperation, now: Int64) async throws -> EmailLinkRedemption
}

extension SQLStore: EmailLinkStore {
    public func insertEmailLink(codeHash: String, _ link: EmailLinkRecord) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO email_links (code_hash, client_id, email, continue_url, handle_in_app, interaction, device_hash, language,
                    wrong_attempts, created_at, expires_at)
                VALUES (\(bind: codeHash), \(bind: link.clientID), \(bind: link.email), \(bind: link.continueURL), \(bind: link.handleInApp),
                    \(bind: link.interaction), \(bind: link.deviceHash), \(bind: link.language), \(bind: link.wrongAttempts),
                    \(bind: link.createdAt), \(bind: link.expiresAt))
                """).run()
        }
    }

    public func emailLink(codeHash: String) async throws -> EmailLinkRecord? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("SELECT * FROM email_links WHERE code_hash = \(bind: codeHash)").first() else { return nil }
            return EmailLinkRecord(
                clientID: try row.string("client_id"), email: try row.string("email"), continueURL: try row.optionalString("continue_url"),
                handleInApp: try row.bool("handle_in_app"), interaction: try row.optionalString("interaction"),
                deviceHash: try row.optionalString("device_hash"), language: try row.string("language"),
                wrongAttempts: Int(try row.int("wrong_attempts")), createdAt: try row.int("created_at"),
                expiresAt: try row.int("expires_at"), usedAt: try row.optionalInt("used_at"))
        }
    }

    public func reserveEmailAttempt(codeHash: String, limit: Int) async throws -> Int? {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE email_links SET wrong_attempts = wrong_attempts + 1
                WHERE code_hash = \(bind: codeHash) AND wrong_attempts < \(bind: limit) RETURNING wrong_attempts
                """).first().map { Int(try $0.int("wrong_attempts")) }
        }
    }

    public func redeemEmailLink(codeHash: String, operation: EmailLinkOperation, now: Int64) async throws -> EmailLinkRedemption {
        try await database.transaction { db in
            guard let row = try await db.raw("""
                SELECT email FROM email_links WHERE code_hash = \(bind: codeHash) AND used_at IS NULL AND expires_at > \(bind: now)
                """).first() else { return .unusable }
            let email = try row.string("email")
            let owner = try await db.raw("SELECT * FROM users WHERE email = \(bind: email)").first().map(Self.user)
            switch operation {
            case .link(let userID):
                if let owner, owner.id != userID { return .credentialInUse }
            case .reauthenticate(let userID):
                guard owner?.id == userID else { return .userMismatch }
            case .signIn:
                break
            }
            guard try await db.raw("""
                UPDATE email_links SET used_at = \(bind: now) WHERE code_hash = \(bind: codeHash) AND used_at IS NULL RETURNING code_hash
                """).first() != nil else { return .unusable }

            switch operation {
            case .signIn(let newUser):
                guard let owner else {
                    let profile = try jsonText(newUser.profile)
                    try await db.raw("""
                        INSERT INTO users (id, email, email_verified, password_hash, profile, created_at, updated_at)
                        VALUES (\(bind: newUser.id), \(bind: email), \(bind: true), \(bind: String?.none), \(bind: profile),
                            \(bind: now), \(bind: now))
                        """).run()
                    var created = newUser
                    created.email = email
                    created.emailVerified = true
                    return .signedIn(created, isNewUser: true, securedAccount: false)
                }
                guard !owner.emailVerified else { return .signedIn(owner, isNewUser: false, securedAccount: false) }
                // Whoever set up this account never proved they own the address: what they set
                // (the password) goes, and so does every session and token issued meanwhile.
                try await db.raw("""
                    UPDATE users SET password_hash = NULL, email_verified = \(bind: true), updated_at = \(bind: now) WHERE id = \(bind: owner.id)
                    """).run()
                try await Self.revokeEverything(userID: owner.id, now: now, on: db)
                try await Self.removeUnverifiedIdentities(userID: owner.id, on: db)
                var secured = owner
                secured.passwordHash = nil
                secured.emailVerified = true
                secured.updatedAt = now
                return .signedIn(secured, isNewUser: false, securedAccount: true)
            case .link(let userID):
                try await db.raw("""
                    UPDATE users SET email = \(bind: email), email_verified = \(bind: true), updated_at = \(bind: now) WHERE id = \(bind: userID)
                    """).run()
                guard let user = try await db.raw("SELECT * FROM users WHERE id = \(bind: userID)").first().map(Self.user) else {
                    throw StoreError.notFound("user \(userID)")
                }
                return .linked(user)
            case .reauthenticate:
                return .reauthenticated(owner!)
            }
        }
    }

    /// Removes the upstream identities linked to an account on the strength of an email address
    /// the upstream had not verified: once the address is proven, they are not proof of anything.
    static func removeUnverifiedIdentities(userID: String, on db: any SQLDatabase) async throws {
        try await db.raw("DELETE FROM upstream_identities WHERE user_id = \(bind: userID) AND proven = \(bind: false)").run()
    }

    /// Ends every browser session and revokes every grant (with its tokens) of a user.
    static func revokeEverything(userID: String, now: Int64, on db: any SQLDatabase) async throws {
        try await db.raw("UPDATE sessions SET revoked_at = \(bind: now) WHERE user_id = \(bind: userID) AND revoked_at IS NULL").run()
        let grants = try await db.raw("SELECT id FROM grants WHERE user_id = \(bind: userID) AND revoked_at IS NULL").all()
        for row in grants { try await revokeGrant(id: try row.string("id"), now: now, on: db) }
    }
}
