import Foundation
import TesseraCore

/// Browser sessions, keyed by the SHA-256 of the cookie value.
public protocol SessionStore: Sendable {
    func insertSession(tokenHash: String, _ session: BrowserSession, now: Int64) async throws
    /// The live session for a cookie hash, or nil when it is unknown, expired or revoked.
    func session(tokenHash: String, now: Int64) async throws -> BrowserSession?
    /// Ends a session (its grants: ``TokenFamilies``).
    func endSession(sid: String, now: Int64) async throws
    /// Ends the session of a cookie (a browser that signs in again gets a new one).
    func revokeSession(tokenHash: String, now: Int64) async throws
    /// Ends every browser session of a user (their grants stay: see ``GrantStore/revokeGrants(userID:now:)``).
    func endSessions(userID: String, now: Int64) async throws
    /// A user's live sessions, the latest sign-in first.
    func sessions(userID: String, now: Int64) async throws -> [BrowserSession]
    /// Records that the session of a cookie was just used.
    func touchSession(tokenHash: String, now: Int64) async throws
}

/// Pending authorization requests waiting for the user on a hosted page.
public protocol InteractionStore: Sendable {
    func insertInteraction(idHash: String, request: String, now: Int64, expiresAt: Int64) async throws
    func interaction(idHash: String, now: Int64) async throws -> String?
    func deleteInteraction(idHash: String) async throws
}

/// What each user allowed each client.
public protocol ConsentStore: Sendable {
    func consentedScopes(userID: String, clientID: String) async throws -> ScopeSet
    func recordConsent(userID: String, clientID: String, scopes: ScopeSet, now: Int64) async throws
    /// Every consent a user gave, newest first.
    func consents(userID: String) async throws -> [Consent]
    /// Deletes the user's consent to a client (its grants: ``TokenFamilies``).
    func deleteConsent(userID: String, clientID: String) async throws
}

/// What a user allowed a client.
public struct Consent: Sendable, Equatable {
    public var clientID: String
    public var scopes: ScopeSet
    public var grantedAt: Int64

    package init(clientID: String, scopes: ScopeSet, grantedAt: Int64) {
        self.clientID = clientID
        self.scopes = scopes
        self.grantedAt = grantedAt
    }
}
