import Foundation
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

    package init(providerID: String, subject: String, userID: String, email: String? = nil, proven: Bool,
                 refreshToken: String? = nil, clientID: String? = nil, createdAt: Int64, lastUsedAt: Int64) {
        self.providerID = providerID
        self.subject = subject
        self.userID = userID
        self.email = email
        self.proven = proven
        self.refreshToken = refreshToken
        self.clientID = clientID
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
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

    package init(providerID: String, nonce: String, codeVerifier: String? = nil, interaction: String? = nil,
                 linkUserID: String? = nil, browserHash: String, expiresAt: Int64) {
        self.providerID = providerID
        self.nonce = nonce
        self.codeVerifier = codeVerifier
        self.interaction = interaction
        self.linkUserID = linkUserID
        self.browserHash = browserHash
        self.expiresAt = expiresAt
    }
}

/// An identity waiting for the owner of the account with its address to sign in.
public struct PendingLink: Sendable, Equatable {
    public var userID: String
    public var identity: UpstreamIdentity
    /// The authorization request to resume once linked.
    public var interaction: String?
    public var expiresAt: Int64

    package init(userID: String, identity: UpstreamIdentity, interaction: String? = nil, expiresAt: Int64) {
        self.userID = userID
        self.identity = identity
        self.interaction = interaction
        self.expiresAt = expiresAt
    }
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
    /// Deletes the account row (and, by cascade, what hangs on it); see ``AccountRules/deleteAccount(_:now:by:in:)``.
    func deleteUser(id: String) async throws
    /// Removes the identities linked on the strength of an address the upstream had not verified.
    func removeUnprovenIdentities(userID: String) async throws
}
