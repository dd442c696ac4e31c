import TesseraCore

/// Checks an access token this provider issued: signature, `typ`, issuer, audience,
/// expiry, and that neither the token nor its grant was revoked.
public struct AccessTokenValidator: Sendable {
    let issuer: String
    let keys: KeyRing
    let grants: any GrantStore
    let clock: WallClock

    package init(issuer: String, keys: KeyRing, grants: any GrantStore, clock: WallClock) {
        self.issuer = issuer
        self.keys = keys
        self.grants = grants
        self.clock = clock
    }

    public struct Validated: Sendable {
        public var token: JWT
        public var grant: Grant?
        public var scope: ScopeSet { ScopeSet(parsing: token.claims["scope"]?.stringValue) }
        public var clientID: String? { token.claims["client_id"]?.stringValue }
    }

    public func validate(_ value: String) async throws -> Validated {
        let invalid = OAuthError(.invalidToken, "The access token is invalid or expired.")
        guard let jwt = try? JWT(parsing: value), jwt.type?.lowercased() == "at+jwt" || jwt.type?.lowercased() == "application/at+jwt",
              (try? keys.verify(jwt)) != nil, jwt.issuer == issuer, jwt.audience.contains(issuer),
              let expiry = jwt.expiresAt, expiry > clock.now(), let jti = jwt.jwtID else { throw invalid }
        if try await grants.isAccessTokenRevoked(jti: jti) { throw invalid }
        var grant: Grant?
        if let gid = jwt.claims["gid"]?.stringValue {
            guard let found = try await grants.grant(id: gid), found.revokedAt == nil else { throw invalid }
            grant = found
        }
        return Validated(token: jwt, grant: grant)
    }
}
