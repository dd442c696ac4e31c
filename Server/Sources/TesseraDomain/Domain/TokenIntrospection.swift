import TesseraCore

/// Token introspection (RFC 7662) and revocation (RFC 7009): what an authenticated client may
/// learn about a token, and what it may end.
///
/// A client sees only the tokens it may see (RFC 7662 §4: the provider decides): tokens issued
/// to it, and access tokens carrying a scope it serves as a resource server
/// (``Client/servedScopes``). Any other token, like an unknown one, is `active: false`: a
/// client learns nothing about another client's tokens, not even that they exist.
package struct TokenIntrospection: Sendable {
    let issuer: String
    let grants: any GrantStore
    let accessTokens: AccessTokenValidator
    let tokenIssuer: TokenIssuer
    /// Native SSO: a device secret revoked by a client of its group ends its device session.
    let deviceSessions: DeviceSessions?
    let clock: WallClock

    package init(issuer: String, grants: any GrantStore, accessTokens: AccessTokenValidator, tokenIssuer: TokenIssuer,
                 deviceSessions: DeviceSessions? = nil, clock: WallClock) {
        self.issuer = issuer
        self.grants = grants
        self.accessTokens = accessTokens
        self.tokenIssuer = tokenIssuer
        self.deviceSessions = deviceSessions
        self.clock = clock
    }

    static let inactive: [String: JSONValue] = ["active": false]

    /// RFC 7662 §2.2. Only confidential clients may introspect: a public client's credentials
    /// are in every copy of its app, so anyone could learn about its users' tokens.
    /// `token` nil: the request had none.
    package func introspect(_ token: String?, by client: Client) async throws -> [String: JSONValue] {
        guard !client.isPublic else { throw OAuthError.invalidClient("Public clients cannot use token introspection.") }
        guard let token else { throw OAuthError.invalidRequest("The token parameter is missing.") }
        if let validated = try? await accessTokens.validate(token) {
            let ownToken = validated.clientID == client.id
            guard ownToken || !validated.scope.intersection(client.servedScopes).isEmpty else { return Self.inactive }
            var answer = validated.token.claims.filter {
                ["iss", "sub", "aud", "exp", "iat", "jti", "scope", "client_id", "auth_time"].contains($0.key)
            }
            answer["active"] = true
            answer["token_type"] = "Bearer"
            return answer
        }
        guard let (grant, expiry) = try await refreshTokenGrant(token, now: clock.now()),
              grant.clientID == client.id else { return Self.inactive }
        var answer: [String: JSONValue] = ["active": true, "token_type": "refresh_token", "client_id": .string(grant.clientID),
                                           "scope": .string(grant.scope.description), "exp": .int(expiry), "iss": .string(issuer)]
        if let userID = grant.userID {
            answer["sub"] = .string(tokenIssuer.subject(userID: userID, client: client))
        }
        return answer
    }

    /// RFC 7009 §2: a refresh token revokes its grant and every token of it; an access token is
    /// revoked alone. Only the client the token was issued to can revoke it; other tokens, and
    /// unknown ones, are ignored (the answer is the same). A Native SSO device secret, revoked by
    /// any client of its group, ends the device session: every app of the group is signed out.
    package func revoke(_ token: String, by client: Client) async throws {
        if let group = client.deviceSSOGroup, let deviceSessions, try await deviceSessions.end(secret: token, group: group) { return }
        let now = clock.now()
        if let (grant, _) = try await refreshTokenGrant(token, now: now) {
            if grant.clientID == client.id { try await grants.revokeGrant(id: grant.id, now: now) }
        } else if let validated = try? await accessTokens.validate(token), validated.clientID == client.id,
                  let jti = validated.token.jwtID, let expiry = validated.token.expiresAt {
            try await grants.revokeAccessToken(jti: jti, expiresAt: expiry)
        }
    }

    /// The grant of a live refresh token of either kind, and the token's expiry.
    private func refreshTokenGrant(_ token: String, now: Int64) async throws -> (grant: Grant, expiresAt: Int64)? {
        guard FamilyTokens.isFamilyFormat(token) else {
            return try await grants.refreshTokenGrant(tokenHash: RefreshTokenKey.key(token), now: now)
        }
        guard let family = tokenIssuer.familyTokens.parse(token) else { return nil }
        return try await grants.familyTokenGrant(grantID: family.grantID, tokenHash: tokenHash(token), now: now)
    }
}
