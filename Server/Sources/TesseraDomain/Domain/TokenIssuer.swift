import Crypto
import Foundation
import TesseraCore

/// Mints the provider's tokens: JWT access tokens (RFC 9068), ID tokens (OpenID Connect
/// Core §2) and opaque refresh tokens (stored only as hashes).
public struct TokenIssuer: Sendable {
    let issuer: String
    package let keys: KeyRing
    let clock: WallClock
    let accessTokenLifetime: Int64
    let idTokenLifetime: Int64
    let refreshTokenLifetime: Int64
    /// Salt for pairwise subject identifiers.
    let pairwiseSecret: String
    /// Refresh tokens whose family keeps only its current one, on its grant's row.
    package let familyTokens: FamilyTokens
    /// Whether new grants get ``FamilyToken``s (else tokens with rows of their own, which nodes
    /// of earlier releases can rotate too).
    let issuesFamilyTokens: Bool

    package init(issuer: String, keys: KeyRing, clock: WallClock, accessTokenLifetime: Int64, idTokenLifetime: Int64,
                 refreshTokenLifetime: Int64, pairwiseSecret: String, familyTokens: FamilyTokens, issuesFamilyTokens: Bool) {
        self.issuer = issuer
        self.keys = keys
        self.clock = clock
        self.accessTokenLifetime = accessTokenLifetime
        self.idTokenLifetime = idTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.pairwiseSecret = pairwiseSecret
        self.familyTokens = familyTokens
        self.issuesFamilyTokens = issuesFamilyTokens
    }

    /// The `sub` a client sees for a user: the user id, or a pairwise identifier
    /// derived from the client's sector (the host of its first redirect URI).
    package func subject(userID: String, client: Client) -> String {
        guard client.subjectType == .pairwise else { return userID }
        let sector = client.redirectURIs.first.flatMap { URL(string: $0)?.host } ?? client.id
        return Base64URL.encode(SHA256.hash(data: Data("\(sector)|\(userID)|\(pairwiseSecret)".utf8)))
    }

    /// An ID token this provider signed, whether expired or not (an `id_token_hint`, Native
    /// SSO's `subject_token`); nil for anything else, an access token included.
    package func verifiedIDToken(_ token: String) -> JWT? {
        guard let jwt = try? JWT(parsing: token), (try? keys.verify(jwt)) != nil, jwt.issuer == issuer, jwt.type != "at+jwt" else {
            return nil
        }
        return jwt
    }

    struct AccessToken {
        var token: String
        var jti: String
        var expiresAt: Int64
    }

    /// RFC 9068 §2.2. `gid` names the grant whose revocation revokes this token.
    func accessToken(subject: String, clientID: String, scope: ScopeSet, grantID: String?,
                     authTime: Int64?, amr: [String]) throws -> AccessToken {
        let now = clock.now()
        let jti = SecureRandom.token(bytes: 16)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(subject), "aud": .string(issuer),
            "client_id": .string(clientID), "iat": .int(now), "exp": .int(now + accessTokenLifetime),
            "jti": .string(jti),
        ]
        if !scope.isEmpty { claims["scope"] = .string(scope.description) }
        if let grantID { claims["gid"] = .string(grantID) }
        if let authTime { claims["auth_time"] = .int(authTime) }
        if !amr.isEmpty { claims["amr"] = .array(amr.map(JSONValue.string)) }
        return AccessToken(token: try keys.sign(claims, type: "at+jwt"), jti: jti, expiresAt: now + accessTokenLifetime)
    }

    /// OpenID Connect Core §2 and §3.1.3.6 (`at_hash`).
    func idToken(subject: String, client: Client, nonce: String?, authTime: Int64?, amr: [String], sid: String?,
                 accessToken: String?, extraClaims: [String: JSONValue]) throws -> String {
        let now = clock.now()
        var claims = extraClaims
        claims["iss"] = .string(issuer)
        claims["sub"] = .string(subject)
        claims["aud"] = .string(client.id)
        claims["azp"] = .string(client.id)
        claims["iat"] = .int(now)
        claims["exp"] = .int(now + idTokenLifetime)
        if let nonce { claims["nonce"] = .string(nonce) }
        if let authTime { claims["auth_time"] = .int(authTime) }
        if !amr.isEmpty { claims["amr"] = .array(amr.map(JSONValue.string)) }
        if let sid { claims["sid"] = .string(sid) }
        if let accessToken { claims["at_hash"] = .string(try halfHash(accessToken)) }
        return try keys.sign(claims)
    }

    /// The left half of the hash of a token, with the hash the signing algorithm uses.
    func halfHash(_ value: String) throws -> String {
        let data = Data(value.utf8)
        let digest: [UInt8] = switch try keys.signingAlgorithm {
        case .rs256, .es256: Array(SHA256.hash(data: data))
        case .edDSA: Array(SHA512.hash(data: data))
        }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }

    /// A new grant's first refresh token and the record that stores its hash.
    func refreshToken(grantID: String, clientID: String, notAfter: Int64) -> (token: String, record: RefreshTokenRecord) {
        let made = issuesFamilyTokens ? familyToken(grantID: grantID, generation: 0) : pendingRefreshToken()
        return (made.token, made.pending.record(grantID: grantID, clientID: clientID, rotatedAt: clock.now(), notAfter: notAfter))
    }

    /// A token of `grantID`'s family at `generation`, made before the rotation that records it.
    func familyToken(grantID: String, generation: Int64) -> (token: String, pending: PendingRefreshToken) {
        let token = familyTokens.make(grantID: grantID, generation: generation)
        return (token, PendingRefreshToken(tokenHash: tokenHash(token), lifetime: refreshTokenLifetime, generation: generation))
    }

    /// A refresh token for a rotation, made before its grant is read (its expiry is settled at
    /// the rotation: the lifetime from then, capped by the grant's).
    func pendingRefreshToken() -> (token: String, pending: PendingRefreshToken) {
        let token = RefreshTokenKey.token(issuedAt: clock.now())
        return (token, PendingRefreshToken(tokenHash: RefreshTokenKey.key(token), lifetime: refreshTokenLifetime))
    }
}
