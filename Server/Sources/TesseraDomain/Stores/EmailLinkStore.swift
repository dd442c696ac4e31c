import Foundation
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

    package init(clientID: String, email: String, continueURL: String? = nil, handleInApp: Bool,
                 interaction: String? = nil, deviceHash: String? = nil, language: String, wrongAttempts: Int,
                 createdAt: Int64, expiresAt: Int64, usedAt: Int64? = nil) {
        self.clientID = clientID
        self.email = email
        self.continueURL = continueURL
        self.handleInApp = handleInApp
        self.interaction = interaction
        self.deviceHash = deviceHash
        self.language = language
        self.wrongAttempts = wrongAttempts
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
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
