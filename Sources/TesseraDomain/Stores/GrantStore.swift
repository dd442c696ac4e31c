import Foundation
import TesseraCore

/// A refresh token to store: only its hash is kept.
public struct RefreshTokenRecord: Sendable {
    public var tokenHash: String
    public var grantID: String
    public var clientID: String
    public var expiresAt: Int64
}

public enum CodeRedemption: Sendable, Equatable {
    case redeemed
    /// The code had been redeemed before; the grant it produced is now revoked.
    case replayed
    case notFound
}

public enum RefreshRotation: Sendable, Equatable {
    case rotated(Grant)
    /// The token had already been rotated: the whole family is now revoked.
    case reused
    case invalid
}

/// Authorization codes, grants and refresh tokens: the token families.
public protocol GrantStore: Sendable {
    func insertCode(codeHash: String, _ code: AuthorizationCodeRecord, now: Int64) async throws
    func code(codeHash: String) async throws -> AuthorizationCodeRecord?
    /// Atomically: marks the code redeemed (if it is not yet), records the grant and its
    /// first refresh token. A second redemption revokes the grant of the first.
    func redeemCode(codeHash: String, grant: Grant, refreshToken: RefreshTokenRecord?, now: Int64) async throws -> CodeRedemption
    func insertGrant(_ grant: Grant, refreshToken: RefreshTokenRecord?) async throws
    /// Atomically: replaces a refresh token with the successor `makeSuccessor` builds for its grant
    /// (which may throw to refuse, changing nothing); presenting a rotated token revokes the family.
    /// Within `reuseInterval` seconds of its rotation, a token whose successor nobody has used yet
    /// may be presented again (a retry after a lost answer): that successor is retired and another
    /// issued. 0 allows no retry.
    /// The rotation is dated by `clock` when its write happens, not when the request arrived.
    func rotateRefreshToken(tokenHash: String, clientID: String, clock: WallClock, reuseInterval: Int64,
                            makeSuccessor: @escaping @Sendable (Grant) throws -> RefreshTokenRecord) async throws -> RefreshRotation
    func grant(id: String) async throws -> Grant?
    func refreshTokenGrant(tokenHash: String, now: Int64) async throws -> (grant: Grant, expiresAt: Int64)?
    func revokeGrant(id: String, now: Int64) async throws
    /// Revokes every grant of a user, with its tokens.
    func revokeGrants(userID: String, now: Int64) async throws
    func revokeAccessToken(jti: String, expiresAt: Int64) async throws
    func isAccessTokenRevoked(jti: String) async throws -> Bool
    /// Records a client assertion's `jti`; false when it was seen before (a replay).
    func recordAssertion(clientID: String, jti: String, expiresAt: Int64, now: Int64) async throws -> Bool
}

extension GrantStore {
    /// Rotation at a fixed time `now`.
    public func rotateRefreshToken(tokenHash: String, clientID: String, now: Int64, reuseInterval: Int64,
                                   makeSuccessor: @escaping @Sendable (Grant) throws -> RefreshTokenRecord) async throws -> RefreshRotation {
        try await rotateRefreshToken(tokenHash: tokenHash, clientID: clientID, clock: WallClock { now }, reuseInterval: reuseInterval,
                                     makeSuccessor: makeSuccessor)
    }

    /// Rotation without a reuse interval: any second presentation is reuse.
    public func rotateRefreshToken(tokenHash: String, clientID: String, now: Int64,
                                   makeSuccessor: @escaping @Sendable (Grant) throws -> RefreshTokenRecord) async throws -> RefreshRotation {
        try await rotateRefreshToken(tokenHash: tokenHash, clientID: clientID, now: now, reuseInterval: 0, makeSuccessor: makeSuccessor)
    }
}

/// Removes rows nobody can use any more.
public protocol Housekeeping: Sendable {
    func purgeExpired(now: Int64, keepFor: Int64) async throws
    /// Takes the turn for `task` when nobody (no node) has taken it in the last `every`
    /// seconds: one conditional write, so of nodes asking together exactly one gets it.
    func takeTurn(_ task: String, now: Int64, every: Int64) async throws -> Bool
}
