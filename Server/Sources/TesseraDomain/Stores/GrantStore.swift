import Foundation
import TesseraCore

/// A refresh token to store: only its hash is kept.
public struct RefreshTokenRecord: Sendable {
    public var tokenHash: String
    public var grantID: String
    public var clientID: String
    public var expiresAt: Int64
    /// A ``FamilyToken``'s generation: the token is its grant's current one, kept on the grant's
    /// row. Nil for a token of a row of its own (`refresh_tokens`).
    public var generation: Int64?

    package init(tokenHash: String, grantID: String, clientID: String, expiresAt: Int64, generation: Int64? = nil) {
        self.tokenHash = tokenHash
        self.grantID = grantID
        self.clientID = clientID
        self.expiresAt = expiresAt
        self.generation = generation
    }
}

/// A refresh token made before its grant is read: the common rotation takes the old token and
/// records this one in one statement (``StoreTransactions/rotateRefreshTokenAtOnce(tokenHash:clientID:successor:clock:)``).
public struct PendingRefreshToken: Sendable {
    public var tokenHash: String
    /// Seconds it lives from its rotation; never past its grant's expiry.
    public var lifetime: Int64
    /// A ``FamilyToken``'s generation; nil for a token of a row of its own.
    public var generation: Int64?

    package init(tokenHash: String, lifetime: Int64, generation: Int64? = nil) {
        self.tokenHash = tokenHash
        self.lifetime = lifetime
        self.generation = generation
    }

    /// The record of it as the successor in `grantID`'s family, rotated at `rotatedAt`.
    package func record(grantID: String, clientID: String, rotatedAt: Int64, notAfter: Int64) -> RefreshTokenRecord {
        RefreshTokenRecord(tokenHash: tokenHash, grantID: grantID, clientID: clientID, expiresAt: min(rotatedAt + lifetime, notAfter),
                           generation: generation)
    }
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

/// A refresh token as it stands, once no rotation of it is under way.
public struct SettledRefreshToken: Sendable, Equatable {
    public var grantID: String
    public var clientID: String
    /// When it was rotated (or retired, or its family revoked); nil while it is unused.
    public var usedAt: Int64?
    public var expiresAt: Int64

    package init(grantID: String, clientID: String, usedAt: Int64?, expiresAt: Int64) {
        self.grantID = grantID
        self.clientID = clientID
        self.usedAt = usedAt
        self.expiresAt = expiresAt
    }
}

/// A family's current refresh token as its grant's row keeps it (``FamilyToken``), once no
/// rotation of it is under way.
public struct FamilyTokenState: Sendable, Equatable {
    public var clientID: String
    /// The current token's hash; nil when the grant keeps none (its tokens have rows of their own).
    public var tokenHash: String?
    public var generation: Int64
    /// The current token's expiry.
    public var expiresAt: Int64
    /// The generation of the token the current one replaced, and when: a retry with that one may
    /// be answered within the reuse interval. Nil until the first rotation.
    public var predecessor: Int64?
    public var rotatedAt: Int64?

    package init(clientID: String, tokenHash: String?, generation: Int64, expiresAt: Int64, predecessor: Int64?, rotatedAt: Int64?) {
        self.clientID = clientID
        self.tokenHash = tokenHash
        self.generation = generation
        self.expiresAt = expiresAt
        self.predecessor = predecessor
        self.rotatedAt = rotatedAt
    }
}

/// Authorization codes, grants and refresh tokens: the token families. Primitives only, each
/// one statement or one conditional write; what they mean together (replay, reuse, a retry,
/// revoking a family) is decided by ``TokenFamilies``, in a transaction.
public protocol GrantStore: Sendable {
    func insertCode(codeHash: String, _ code: AuthorizationCodeRecord, now: Int64) async throws
    func code(codeHash: String) async throws -> AuthorizationCodeRecord?
    /// Marks the code redeemed by `grantID` if nobody has yet: true for the one caller that took it.
    func takeCode(codeHash: String, grantID: String, now: Int64) async throws -> Bool
    /// Records a grant with its first refresh token.
    func insertGrant(_ grant: Grant, refreshToken: RefreshTokenRecord?) async throws
    /// Marks a refresh token of `clientID` used if it is unused and unexpired: its grant's id for
    /// the one caller that took it, nil otherwise.
    func takeRefreshToken(tokenHash: String, clientID: String, now: Int64) async throws -> String?
    /// The token's state, read after any rotation of it under way has committed (and held so
    /// until the transaction ends); nil for an unknown token.
    func settledRefreshToken(tokenHash: String) async throws -> SettledRefreshToken?
    /// Marks used the unused successor of `tokenHash` in its family: true when there was one.
    func retireSuccessor(of tokenHash: String, grantID: String, now: Int64) async throws -> Bool
    /// Records the successor of `predecessor` in its family.
    func insertRefreshToken(_ token: RefreshTokenRecord, replacing predecessor: String?, now: Int64) async throws
    /// The current token of `grantID`'s family, read after any rotation of it under way has
    /// committed (and held so until the transaction ends); nil for an unknown grant.
    func settledFamily(grantID: String) async throws -> FamilyTokenState?
    /// Makes `token` (of `generation`) its grant's current token, replacing the one of `predecessor`
    /// at `rotatedAt`.
    func replaceFamilyToken(_ token: RefreshTokenRecord, generation: Int64, predecessor: Int64, rotatedAt: Int64) async throws
    /// The grant of a family's current token and that token's expiry, while both are live.
    func familyTokenGrant(grantID: String, tokenHash: String, now: Int64) async throws -> (grant: Grant, expiresAt: Int64)?
    func grant(id: String) async throws -> Grant?
    /// The grants not yet revoked that were made in the browser session `sid`.
    func liveGrants(sid: String) async throws -> [Grant]
    func refreshTokenGrant(tokenHash: String, now: Int64) async throws -> (grant: Grant, expiresAt: Int64)?
    /// Revokes one family: the grant and every refresh token of it.
    func revokeGrant(id: String, now: Int64) async throws
    /// Revokes every family of a user (see ``TokenFamilies`` for what else ends with them).
    func revokeGrants(userID: String, now: Int64) async throws
    /// Revokes every grant of a user but one (the request's own, which a password change keeps).
    func revokeGrants(userID: String, except grantID: String, now: Int64) async throws
    /// Revokes every family of a user at one client.
    func revokeGrants(userID: String, clientID: String, now: Int64) async throws
    /// Revokes every family made in a Native SSO device session.
    func revokeGrants(deviceSessionID: String, now: Int64) async throws
    func revokeAccessToken(jti: String, expiresAt: Int64) async throws
    func isAccessTokenRevoked(jti: String) async throws -> Bool
    /// Records a client assertion's `jti`; false when it was seen before (a replay).
    func recordAssertion(clientID: String, jti: String, expiresAt: Int64, now: Int64) async throws -> Bool
}

/// Removes rows nobody can use any more.
public protocol Housekeeping: Sendable {
    /// Deletes what expired more than `keepFor` seconds before `now`, in short transactions; a
    /// cancelled task stops between two of them.
    func purgeExpired(now: Int64, keepFor: Int64) async throws
    /// Takes the turn for `task` when nobody (no node) has taken it in the last `every`
    /// seconds: one conditional write, so of nodes asking together exactly one gets it.
    func takeTurn(_ task: String, now: Int64, every: Int64) async throws -> Bool
}
