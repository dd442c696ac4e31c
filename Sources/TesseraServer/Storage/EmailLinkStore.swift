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
    /// Marks the link used if it is still unused and unexpired; false when it is not (another
    /// request used it first).
    func markEmailLinkUsed(codeHash: String, now: Int64) async throws -> Bool
}

extension SQLStore: EmailLinkStore {
    public func insertEmailLink(codeHash: String, _ link: EmailLinkRecord) async throws {
        try await database.withDatabase { db in
            try await db.raw("""
                INSERT INTO email_links (code_hash, client_id, email, continue_url, handle_in_app, interaction, device_hash, language,
                    wrong_attempts, created_at, expires_at)
                VALUES (\(bind: codeHash), \(bind: link.clientID == EmailLinks.accountClientID ? nil : link.clientID), \(bind: link.email), \(bind: link.continueURL), \(bind: link.handleInApp),
                    \(bind: link.interaction), \(bind: link.deviceHash), \(bind: link.language), \(bind: link.wrongAttempts),
                    \(bind: link.createdAt), \(bind: link.expiresAt))
                """).run()
        }
    }

    public func emailLink(codeHash: String) async throws -> EmailLinkRecord? {
        try await database.withDatabase { db in
            guard let row = try await db.raw("SELECT * FROM email_links WHERE code_hash = \(bind: codeHash)").first() else { return nil }
            return EmailLinkRecord(
                clientID: try row.optionalString("client_id") ?? EmailLinks.accountClientID, email: try row.string("email"), continueURL: try row.optionalString("continue_url"),
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

    public func markEmailLinkUsed(codeHash: String, now: Int64) async throws -> Bool {
        try await database.withDatabase { db in
            try await db.raw("""
                UPDATE email_links SET used_at = \(bind: now)
                WHERE code_hash = \(bind: codeHash) AND used_at IS NULL AND expires_at > \(bind: now) RETURNING code_hash
                """).first() != nil
        }
    }
}
